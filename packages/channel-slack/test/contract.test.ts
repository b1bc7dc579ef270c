import type { ConversationRef } from '@switchboard/core';
import {
  CANARY_SLACK_APP_TOKEN,
  CANARY_SLACK_BOT_TOKEN,
  CANARY_SLACK_SIGNING_SECRET,
  type ContractHarness,
  type ContractRig,
  FakeChannelEnv,
  runChannelContract,
  startFakeSlack,
} from '@switchboard/testkit';
import { WebClient } from '@slack/web-api';
import type { SlackAccountConfig } from '../src/account.js';
import { slackPaths } from '../src/http-receiver.js';
import { SlackChannel } from '../src/slack-channel.js';

/**
 * The Slack channel against the testkit fake Slack: the Web API through @slack/web-api, inbound
 * events as signed Events API POSTs over real HTTP (redelivered with `X-Slack-Retry-Num` until
 * answered 2xx, as Slack does) or as Socket Mode envelopes (ack over the socket).
 */
async function slackRig(mode: 'http' | 'socket'): Promise<ContractRig> {
  const env = new FakeChannelEnv();
  const slack = await startFakeSlack();
  const cfg: SlackAccountConfig = {
    botToken: CANARY_SLACK_BOT_TOKEN,
    mode,
    ...(mode === 'http' ? { signingSecret: CANARY_SLACK_SIGNING_SECRET } : { appToken: CANARY_SLACK_APP_TOKEN }),
    apiUrl: slack.apiUrl,
    livenessTimeout: 30_000,
    clientPingTimeout: 10_000,
    reconnectBackoffMax: 100,
    maxRetries: 0,
    editInterval: 50,
    refusedRetryInterval: 60_000,
    apiTimeout: 5000,
    required: false,
  };
  const channel = new SlackChannel('main', cfg, { dataDir: '/nonexistent', log: env.log });
  const im = slack.identity.imChannelId;
  const web = new WebClient(CANARY_SLACK_BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  const conversation: ConversationRef = { channel: 'slack', account: 'main', id: im, kind: 'dm' };
  const keyOf = (event: Record<string, unknown>) => `${slack.identity.teamId}:${String(event.channel)}:${String(event.ts)}`;
  /** One delivery per attempt, with Slack's retry headers, until the app answers 2xx (HTTP) or acks (socket). */
  const deliver = async (event: Record<string, unknown>, eventId: string | undefined, firstRetry: number) => {
    const key = keyOf(event);
    for (let attempt = firstRetry; attempt < firstRetry + 10; attempt++) {
      const retry = attempt > 0 ? { retryNum: attempt, retryReason: 'http_error' } : {};
      if (mode === 'http') {
        const res = await slack.deliverEvent(`${env.url}${slackPaths('main').events}`, event, { ...retry, ...(eventId ? { eventId } : {}) });
        if (res.status >= 200 && res.status < 300) {
          env.mark('ack', key);
          return res.eventId;
        }
        env.mark('nack', key, String(res.status));
      } else {
        // Slack waits 3 s for an ack before it redelivers; the fake's wait stands in for that timer.
        const acked = await slack.socketSend(event, { timeoutMs: 1500, ...(attempt > 0 ? { retryAttempt: attempt, retryReason: 'timeout' } : {}) }).then(
          () => true,
          () => false,
        );
        if (acked) {
          env.mark('ack', key);
          return eventId;
        }
        env.mark('nack', key, 'no ack');
      }
    }
    throw new Error(`event ${key} was never acknowledged`);
  };
  return {
    env,
    channel,
    conversation,
    steered: 'nothing',
    async start() {
      await channel.start(env.contextFor(channel));
      await env.listen();
      await slack.waitFor(() => slack.callsTo('auth.test').some((c) => c.ok), 5000, 'auth.test');
      if (mode === 'socket') await slack.waitFor(() => slack.liveSockets() > 0, 5000, 'a socket');
    },
    async inject(text) {
      const event = slack.events.im({ text, channel: im });
      const eventId = await deliver(event, undefined, 0);
      return { dedupeKey: keyOf(event), text, handle: { event, eventId } };
    },
    async redeliver(item) {
      const { event, eventId } = item.handle as { event: Record<string, unknown>; eventId: string | undefined };
      await deliver(event, eventId, 1);
    },
    async output() {
      return slack.messages(im).map((m) => ({ kind: 'message' as const, text: m.text, id: m.ts }));
    },
    async seedDraft(text) {
      const r = await web.chat.postMessage({ channel: im, text });
      return String(r.ts);
    },
    async message(id) {
      const m = slack.messages(im, { includeDeleted: true }).find((s) => s.ts === id);
      return m ? { text: m.text, deleted: m.deleted } : undefined;
    },
    async breakPlatform() {
      // Refused for the rest of this rig (the fake cannot disarm queued faults; this point runs last on its rig).
      for (const method of ['chat.postMessage', 'chat.update', 'chat.delete', 'users.info'])
        for (let i = 0; i < 200; i++) slack.failNext(method, { error: 'channel_not_found' });
      return async () => undefined;
    },
    async close() {
      await slack.close();
      await env.close();
    },
  };
}

runChannelContract({ name: 'slack (events over http)', setup: () => slackRig('http') } satisfies ContractHarness);
runChannelContract({
  name: 'slack (socket mode)',
  setup: () => slackRig('socket'),
  // @slack/socket-mode's SlackWebSocket.disconnect() arms a 30 s close-handshake timer
  // (CLOSE_HANDSHAKE_TIMEOUT_MS) that is still pending after the channel's stop resolved (the SDK
  // reports a WebSocket error during the close). The gateway exits explicitly after shutdown, so
  // it costs nothing there, and the channel has no handle on it.
  knownLibraryTimers: /@slack[\\/]socket-mode[\\/]dist[\\/]src[\\/]SlackWebSocket\.js/,
} satisfies ContractHarness);
