import { afterAll, beforeAll } from 'vitest';
import { storeRows } from './store-rows.js';
import {
  api,
  CANARY_TELEGRAM_TOKEN,
  startFakeAnthropic,
  startFakeTelegram,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type FakeTelegram,
  type GatewayProcess,
  type TgCall,
  type TgChat,
  type TgUser,
} from '@switchboard/testkit';

/** The planted bot token (a canary: it must never show up in any log). */
export const TOKEN = CANARY_TELEGRAM_TOKEN;
export const BOT_USERNAME = 'swb_test_bot';

/** A person and their private chat with the bot. */
export function person(id: number, first_name: string): { user: TgUser; dm: TgChat } {
  return { user: { id, is_bot: false, first_name }, dm: { id, type: 'private', first_name } };
}

export const ALICE = person(1001, 'Alice');
export const BOB = person(1002, 'Bob');
export const GROUP: TgChat = { id: -100200300, type: 'supergroup', title: 'Team room' };

/** A fake model, a fake Bot API and a gateway whose `telegram:main` account points at it. */
export interface TelegramEnv {
  model: FakeAnthropic;
  tg: FakeTelegram;
  gw: GatewayProcess;
}

/** Test defaults: fast edits and no per-chat spacing; each test shortens only the timer it tests. */
export function telegramAccount(tg: FakeTelegram, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { token: TOKEN, apiRoot: tg.apiRoot, editInterval: 200, chatSendInterval: 0, maxRetryAttempts: 3, ...extra };
}

/** Starts the fakes and the gateway. */
export async function startTelegramEnv(account: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<TelegramEnv> {
  const model = await startFakeAnthropic();
  const tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
  const gw = await startGateway({
    modelUrl: model.url,
    config: { ...config, channels: { telegram: { accounts: { main: telegramAccount(tg, account) } } } },
  });
  return { model, tg, gw };
}

/**
 * Registers `beforeAll` (`startTelegramEnv(account, config)`) and `afterAll` (stop every gateway,
 * close the fakes) in the calling file. The returned object is filled in by `beforeAll`, so read it
 * inside tests and hooks; after a restart assign the new gateway to `env.gw`.
 */
export function useTelegramEnv(account: Record<string, unknown> = {}, config: Record<string, unknown> = {}): TelegramEnv {
  const env = {} as TelegramEnv;
  beforeAll(async () => {
    Object.assign(env, await startTelegramEnv(account, config));
  });
  afterAll(async () => {
    await stopAllGateways();
    await env.tg?.close();
    await env.model?.close();
  });
  return env;
}

/** Params of a call as sent (grammY sends JSON). */
export const params = (c: TgCall) => c.params as Record<string, any>;

/** True for a final answer's send or edit in `chatId` (finals are HTML; drafts are plain text). */
export const isFinal = (chatId: number) => (c: TgCall) =>
  (c.method === 'sendMessage' || c.method === 'editMessageText') && params(c).chat_id === chatId && params(c).parse_mode === 'HTML' && c.status === 200;

/** Waits for the answered call that delivers text containing `needle` in `chatId`. */
export function waitForText(tg: FakeTelegram, chatId: number, needle: string, timeoutMs = 15_000, since = 0): Promise<TgCall> {
  return tg.waitForAnswered(
    (c) =>
      (c.method === 'sendMessage' || c.method === 'editMessageText') &&
      params(c).chat_id === chatId &&
      c.status === 200 &&
      String(params(c).text).includes(needle),
    timeoutMs,
    since,
  );
}

/** The visible texts of the bot's current (not deleted) messages in a chat, oldest first. */
export const texts = (tg: FakeTelegram, chatId: number) => tg.sent(TOKEN, chatId).map((m) => m.text ?? '');

/** Operator-token GET/POST on the control API. */
export function control(gw: GatewayProcess, method: string, path: string, body?: unknown) {
  return api(gw, method, `/api/v1${path}`, { token: gw.credentials().operatorToken, ...(body !== undefined ? { body } : {}) });
}

/** The Telegram channel's health as /readyz shows it (details need a read token). */
export async function readyHealth(gw: GatewayProcess): Promise<{ state: string; detail?: string }> {
  const r = await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken });
  return r.json.channels['telegram:main'];
}

/** Re-checks `check` on each fake-Telegram event (and at most every `everyMs`) until it holds. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The `telegram:<account>:offset` cursor row in the gateway's store (SQLite or PostgreSQL), or
 * null when none was stored. Read-only, so it works while the gateway runs.
 */
export async function storedOffset(gw: GatewayProcess, account = 'main'): Promise<string | null> {
  const rows = await storeRows<{ value: string }>(gw, 'SELECT value FROM cursors WHERE key = ?', [`telegram:${account}:offset`]);
  return rows[0]?.value ?? null;
}
