import { Writable } from 'node:stream';
import type { ChannelCursors } from '@switchboard/core';
import { DEFAULT_TELEGRAM_TOKEN, FakeChannelEnv, type FakeTelegram, startFakeTelegram } from '@switchboard/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { TelegramAccountConfig } from '../src/options.js';
import { TelegramChannel } from '../src/telegram-channel.js';

const TOKEN = DEFAULT_TELEGRAM_TOKEN;
const ADA = { chat: { id: 4242, type: 'private' as const }, from: { id: 7, is_bot: false, first_name: 'Ada' } };

function config(tg: FakeTelegram): TelegramAccountConfig {
  return {
    token: TOKEN,
    apiRoot: tg.apiRoot,
    mode: 'polling',
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
}

/** The account's cursors over the env's real store, failing the next `failGets` reads and `failSets` writes. */
function flakyCursors(env: FakeChannelEnv, faults: { gets: number; sets: number }): ChannelCursors {
  const key = (name: string) => `telegram:main:${name}`;
  return {
    get: async (name) => {
      if (faults.gets-- > 0) throw new Error('database unavailable (read)');
      return env.storage.cursors.get(key(name));
    },
    set: async (name, value) => {
      if (faults.sets-- > 0) throw new Error('database unavailable (write)');
      await env.storage.cursors.set(key(name), value);
    },
  };
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function rig(faults: { gets: number; sets: number }) {
  const env = new FakeChannelEnv();
  const tg = await startFakeTelegram();
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const channel = new TelegramChannel('main', config(tg), { dataDir: '/nonexistent-swb-data-dir', log });
  const ctx = env.contextFor(channel);
  cleanup.push(async () => {
    await channel.stop();
    await tg.close();
    await env.close();
  });
  const start = () => channel.start({ ...ctx, inbox: { ...ctx.inbox, cursors: flakyCursors(env, faults) }, log });
  return { env, tg, lines, start };
}

describe('telegram polling: the offset cursor under storage faults', () => {
  it('an unreadable cursor is retried with backoff before the first getUpdates; polling then starts from the stored offset', async () => {
    const { env, tg, lines, start } = await rig({ gets: 2, sets: 0 });
    tg.sendUserMessage(TOKEN, { ...ADA, text: 'handled before the restart' });
    const fresh = tg.sendUserMessage(TOKEN, { ...ADA, text: 'new' });
    await env.storage.cursors.set('telegram:main:offset', String(fresh.update_id));
    await start();
    const first = await tg.waitFor('getUpdates', 10_000);
    expect((first.params as { offset?: unknown }).offset).toBe(fresh.update_id);
    expect(lines.filter((l) => l.includes('"event":"telegram_init_failed"') && l.includes('database unavailable (read)'))).toHaveLength(2);
    await tg.waitFor((c) => c.method === 'getUpdates' && Number((c.params as { offset?: unknown }).offset) === fresh.update_id + 1, 10_000);
    expect(env.accepted.map((m) => m.text)).toEqual(['new']);
    expect(await env.storage.cursors.get('telegram:main:offset')).toBe(String(fresh.update_id + 1));
  });

  it('a failed offset write is logged and the next one catches up; nothing is accepted twice', async () => {
    const { env, tg, lines, start } = await rig({ gets: 0, sets: 1 });
    await start();
    await tg.waitForAnswered('getUpdates', 10_000);
    const one = tg.sendUserMessage(TOKEN, { ...ADA, text: 'one' });
    await tg.waitFor((c) => c.method === 'getUpdates' && Number((c.params as { offset?: unknown }).offset) === one.update_id + 1, 10_000);
    expect(lines.some((l) => l.includes('could not persist the update offset'))).toBe(true);
    expect(await env.storage.cursors.get('telegram:main:offset')).toBeNull();
    const two = tg.sendUserMessage(TOKEN, { ...ADA, text: 'two' });
    await tg.waitFor((c) => c.method === 'getUpdates' && Number((c.params as { offset?: unknown }).offset) === two.update_id + 1, 10_000);
    expect(await env.storage.cursors.get('telegram:main:offset')).toBe(String(two.update_id + 1));
    expect(env.accepted.map((m) => m.text)).toEqual(['one', 'two']);
  });
});
