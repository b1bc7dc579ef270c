import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConversationRef } from '@switchboard/core';
import {
  type ContractHarness,
  type ContractRig,
  DEFAULT_TELEGRAM_TOKEN,
  FakeChannelEnv,
  runChannelContract,
  startFakeTelegram,
  type TgUpdate,
} from '@switchboard/testkit';
import { Api } from 'grammy';
import { webhookPath, type TelegramAccountConfig } from '../src/options.js';
import { TelegramChannel } from '../src/telegram-channel.js';

const TOKEN = DEFAULT_TELEGRAM_TOKEN;
const CHAT = 4242;
const SECRET = 'contract-telegram-secret';

/**
 * The Telegram channel against the testkit fake Bot API through grammY. Polling: the ack is the
 * next getUpdates whose offset passes the update. Webhook: the update is POSTed over real HTTP
 * to the channel's route as Telegram does (and again until answered 200).
 */
async function telegramRig(mode: 'polling' | 'webhook'): Promise<ContractRig> {
  const env = new FakeChannelEnv();
  const tg = await startFakeTelegram();
  const dataDir = mkdtempSync(join(tmpdir(), 'swb-tg-contract-'));
  const cfg: TelegramAccountConfig = {
    token: TOKEN,
    apiRoot: tg.apiRoot,
    mode,
    ...(mode === 'webhook' ? { webhookSecret: SECRET } : {}),
    pollTimeout: 1000,
    pollStallTimeout: 10_000,
    typingInterval: 4000,
    editInterval: 50,
    chatSendInterval: 0,
    maxRetryAttempts: 0,
    retryBaseDelay: 1,
    retryMaxDelay: 20,
    apiTimeout: 5000,
    authRetryInterval: 60_000,
    maxInboundMediaBytes: 1 << 20,
    mentionPatterns: [],
    required: false,
  };
  const channel = new TelegramChannel('main', cfg, { dataDir, log: env.log });
  const api = new Api(TOKEN, { apiRoot: tg.apiRoot });
  const conversation: ConversationRef = { channel: 'telegram', account: 'main', id: String(CHAT), kind: 'dm' };
  const post = async (update: TgUpdate) => {
    const key = String(update.update_id);
    for (let attempt = 0; attempt < 50; attempt++) {
      const res = await fetch(`${env.url}${webhookPath('main')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
        body: JSON.stringify(update),
      });
      await res.arrayBuffer();
      if (res.status === 200) {
        env.mark('ack', key);
        return;
      }
      env.mark('nack', key, String(res.status));
    }
    throw new Error(`update ${key} was never answered 200`);
  };
  const confirmed = async (update: TgUpdate) => {
    await tg.waitFor((c) => c.method === 'getUpdates' && Number((c.params as { offset?: unknown }).offset) > update.update_id);
    env.mark('ack', String(update.update_id));
  };
  return {
    env,
    channel,
    conversation,
    steered: 'nothing',
    async start() {
      await channel.start(env.contextFor(channel));
      await env.listen();
      await tg.waitForAnswered('getMe');
    },
    async inject(text) {
      const update = tg.sendUserMessage(TOKEN, { chat: { id: CHAT, type: 'private' }, from: { id: 7, is_bot: false, first_name: 'Ada' }, text });
      if (mode === 'webhook') await post(update);
      else await confirmed(update);
      return { dedupeKey: String(update.update_id), text, handle: update };
    },
    async redeliver(item) {
      // Telegram redelivers a webhook update it got no 200 for; a confirmed polling update never comes back.
      await post(item.handle as TgUpdate);
    },
    async output() {
      return tg.sent(TOKEN, CHAT).map((m) => ({ kind: 'message' as const, text: m.text ?? '', id: String(m.message_id) }));
    },
    async seedDraft(text) {
      return String((await api.sendMessage(CHAT, text)).message_id);
    },
    async message(id) {
      const m = tg.sent(TOKEN, CHAT, { includeDeleted: true }).find((s) => s.message_id === Number(id));
      return m ? { text: m.text ?? '', deleted: m.deleted === true } : undefined;
    },
    async breakPlatform() {
      // Every call refused for the rest of this rig (the fake has no way to disarm faults; this point runs last on its rig).
      tg.failNext('*', { status: 400, description: 'Bad Request: chat not found' }, { times: 10_000 });
      return async () => undefined;
    },
    async close() {
      await tg.close();
      await env.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const webhook: ContractHarness = { name: 'telegram (webhook)', setup: () => telegramRig('webhook') };
const polling: ContractHarness = { name: 'telegram (polling)', setup: () => telegramRig('polling') };
runChannelContract(webhook);
runChannelContract(polling, {
  notApplicable: { 'a redelivery makes one turn': 'Telegram never redelivers a confirmed polling update within one process; the webhook harness covers it' },
});
