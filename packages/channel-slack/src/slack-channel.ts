import type { WebClient } from '@slack/web-api';
import type { Channel, ChannelContext, ChannelFactoryDeps, ChannelHealth, ConversationRef, RenderMeta, TurnEvent } from '@switchboard/core';
import type { Logger } from 'pino';
import type { SlackAccountConfig } from './account.js';
import { AnsweredThreads } from './answered-threads.js';
import { ApprovalBoard } from './approval-board.js';
import { slackHttpRoutes, slackPaths } from './http-receiver.js';
import { mapMessageEvent, parseMessageEvent, type SlackSelf } from './inbound.js';
import { handleBlockActions, runSlashCommand, type InteractionDeps, type SlashCommand } from './interactions.js';
import { chunkMrkdwn, escapeMrkdwn, SLACK_CHUNK_LIMIT } from './mrkdwn.js';
import { RecentKeys } from './recent-keys.js';
import { SocketModeConnection, type SocketEnvelope } from './socket-connection.js';
import { TurnRender } from './turn-render.js';
import { UserNames } from './user-names.js';
import { createWebClient, slackErrorCode } from './web.js';

const DEFAULT_API_TIMEOUT_MS = 15_000;

/**
 * One Slack workspace app: Events API over the gateway's HTTP server or Socket Mode, inbound
 * events durably accepted before they are acknowledged, replies streamed into a draft and
 * finished in ledgered chunks, approvals as Block Kit buttons.
 */
export class SlackChannel implements Channel {
  readonly type = 'slack';
  readonly id: string;
  readonly required: boolean;
  readonly capabilities = { threads: true, edits: true, buttons: true, maxText: SLACK_CHUNK_LIMIT };
  private ctx: ChannelContext | null = null;
  private api: WebClient | null = null;
  private drafts: WebClient | null = null;
  private names: UserNames | null = null;
  private self: SlackSelf | null = null;
  private identity: { ok: boolean; detail: string } = { ok: false, detail: 'not started' };
  private socket: SocketModeConnection | null = null;
  private readonly board = new ApprovalBoard();
  private readonly recent = new RecentKeys();
  private threads: AnsweredThreads | null = null;
  private readonly inflight = new Set<Promise<unknown>>();
  private identifyTimer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private readonly log: Logger;

  constructor(
    readonly account: string,
    private readonly cfg: Readonly<SlackAccountConfig>,
    deps: ChannelFactoryDeps,
  ) {
    this.id = `slack:${account}`;
    this.required = cfg.required;
    this.log = deps.log.child({ channel: this.id });
  }

  async start(ctx: ChannelContext): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.ctx = ctx;
    const timeoutMs = this.cfg.apiTimeout ?? DEFAULT_API_TIMEOUT_MS;
    const spec = { apiUrl: this.cfg.apiUrl, retries: this.cfg.maxRetries, timeoutMs, log: this.log };
    this.api = createWebClient(this.cfg.botToken, spec);
    this.drafts = createWebClient(this.cfg.botToken, { ...spec, retries: 0, rejectRateLimitedCalls: true });
    this.names = new UserNames(createWebClient(this.cfg.botToken, { ...spec, retries: 0, timeoutMs: 1000 }));
    this.threads = new AnsweredThreads((channel) => ctx.finalsSince({ channel: 'slack', account: this.account, id: channel, kind: 'room' }, 0));
    await this.identify(0);
    if (this.cfg.mode === 'http') {
      await ctx.http.register(
        slackHttpRoutes({
          account: this.account,
          signingSecret: this.cfg.signingSecret ?? '',
          log: this.log,
          onEvent: (body, retry) => this.onEvent(body, retry.num),
          onInteraction: (payload) => this.track(this.onInteraction(payload)),
          onCommand: (fields) => runSlashCommand(this.interactionDeps(), fields),
        }),
      );
      this.log.info({ paths: slackPaths(this.account) }, 'slack events endpoint mounted');
      return;
    }
    this.socket = new SocketModeConnection({
      appToken: this.cfg.appToken ?? '',
      apiUrl: this.cfg.apiUrl,
      clientPingTimeout: this.cfg.clientPingTimeout,
      livenessTimeout: this.cfg.livenessTimeout,
      reconnectBackoffMax: this.cfg.reconnectBackoffMax,
      maxRetries: this.cfg.maxRetries,
      apiTimeout: timeoutMs,
      log: this.log.child({ receiver: 'socket' }),
      onEnvelope: (env) => this.onEnvelope(env),
    });
    await this.socket.start();
  }

  /** `auth.test`: who the bot is (for mentions and ignoring itself). Retried in the background with backoff. */
  private async identify(attempt: number): Promise<void> {
    if (this.stopped) return;
    try {
      const r = await this.api!.auth.test();
      this.self = { teamId: r.team_id ?? '', botUserId: r.user_id ?? '', botId: r.bot_id ?? '' };
      this.identity = { ok: true, detail: `team ${this.self.teamId}, bot user ${this.self.botUserId}` };
    } catch (err) {
      const code = slackErrorCode(err);
      this.identity = { ok: false, detail: `auth.test failed: ${code}` };
      this.log.error({ code, attempt }, 'slack auth.test failed');
      const delay = Math.min(this.cfg.reconnectBackoffMax, 1000 * 2 ** attempt);
      this.identifyTimer = setTimeout(() => void this.identify(attempt + 1), delay);
      this.identifyTimer.unref();
    }
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    if (!this.started) return { state: 'down', detail: 'not started' };
    if (this.socket) {
      const s = this.socket.status();
      return this.identity.ok ? s : { state: s.state === 'up' ? 'degraded' : s.state, detail: `${s.detail}; ${this.identity.detail}` };
    }
    return this.identity.ok ? { state: 'up', detail: `http: ${slackPaths(this.account).events}` } : { state: 'degraded', detail: this.identity.detail };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.identifyTimer);
    await this.socket?.stop();
    await Promise.allSettled([...this.inflight]);
  }

  private track(p: Promise<unknown>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private interactionDeps(): InteractionDeps {
    return { ctx: this.ctx!, api: this.api!, board: this.board, account: this.account, log: this.log };
  }

  /** Maps and stores one event_callback; throws when the inbox refused it (the caller does not ack). */
  private async onEvent(body: Record<string, unknown>, retryNum: number | null | undefined): Promise<void> {
    const parsed = parseMessageEvent(body.event);
    if ('drop' in parsed) {
      this.log.debug({ eventId: typeof body.event_id === 'string' ? body.event_id : undefined, reason: parsed.drop }, 'slack event dropped');
      return;
    }
    const ev = parsed.event;
    const mapped = mapMessageEvent(ev, typeof body.team_id === 'string' ? body.team_id : '', this.account, this.self);
    if ('drop' in mapped) {
      this.log.debug({ eventId: body.event_id, reason: mapped.drop }, 'slack event dropped');
      return;
    }
    const msg = mapped.message;
    // A reply in a thread the bot takes part in is for the bot, mention or not.
    const thread = msg.conversation.thread;
    if (msg.kind === 'room' && !msg.mentioned && ev.thread_ts && thread && (await this.threads!.has(msg.conversation.id, thread))) msg.mentioned = true;
    // An unmentioned copy (ignored by the gate, so never in the inbox) must not fold a mentioned one.
    const ran = await this.recent.once(`${msg.dedupeKey}${msg.mentioned ? ':m' : ''}`, async () => {
      if (msg.kind === 'dm' && ev.user) {
        const name = await this.names!.get(ev.user);
        if (name) msg.sender.displayName = name;
      }
      const res = await this.ctx!.accept(msg);
      if (res.gate === 'admitted' && msg.kind === 'room' && thread) this.threads!.add(msg.conversation.id, thread);
      this.log.info({ eventId: body.event_id, dedupeKey: msg.dedupeKey, retryNum, gate: res.gate, duplicate: res.duplicate, turnId: res.turnId }, 'slack event accepted');
    });
    if (!ran) this.log.debug({ eventId: body.event_id, dedupeKey: msg.dedupeKey, retryNum }, 'slack event folded into its first delivery');
  }

  private async onInteraction(payload: Record<string, unknown>): Promise<void> {
    if (payload.type === 'block_actions') await handleBlockActions(this.interactionDeps(), payload);
  }

  /** Socket Mode: inbox first, then ack, then anything slower. An event we could not store is not acked (Slack redelivers). */
  private async onEnvelope(env: SocketEnvelope): Promise<void> {
    try {
      if (env.type === 'events_api') {
        if (env.body.type === 'event_callback') await this.onEvent(env.body, env.retryNum);
        await env.ack();
      } else if (env.type === 'interactive') {
        await env.ack();
        this.track(this.onInteraction(env.body));
      } else if (env.type === 'slash_commands') {
        const text = await runSlashCommand(this.interactionDeps(), env.body as SlashCommand);
        await env.ack({ response_type: 'ephemeral', text });
      } else {
        await env.ack();
      }
    } catch (err) {
      this.log.error({ err, envelopeId: env.envelopeId, type: env.type }, 'slack envelope not stored; left unacknowledged for redelivery');
    }
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, _meta: RenderMeta): Promise<void> {
    if (to.kind === 'room' && to.thread) this.threads?.add(to.id, to.thread);
    const r = new TurnRender(
      { ctx: this.ctx!, api: this.api!, drafts: this.drafts!, account: this.account, editIntervalMs: this.cfg.editInterval, board: this.board, log: this.log },
      to,
      turnId,
    );
    const done = (async () => {
      try {
        await r.load();
      } catch (err) {
        this.log.error({ err, turnId }, 'slack delivery ledger unreadable; rendering without it');
      }
      for await (const ev of turn) await r.on(ev);
      await r.close();
    })();
    this.track(done);
    await done.catch((err: unknown) => this.log.error({ err, turnId }, 'slack render failed'));
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    if (!this.api) return;
    const send = (async () => {
      for (const part of chunkMrkdwn(escapeMrkdwn(text))) {
        await this.api!.chat.postMessage({ channel: to.id, text: part, ...(to.thread ? { thread_ts: to.thread } : {}), unfurl_links: false, unfurl_media: false });
      }
    })();
    this.track(send);
    await send.catch((err: unknown) => this.log.warn({ code: slackErrorCode(err), conversation: to.id }, 'slack notice not delivered'));
  }
}
