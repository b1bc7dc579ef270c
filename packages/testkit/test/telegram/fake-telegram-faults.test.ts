import { readFileSync } from 'node:fs';
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, HttpError } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_TELEGRAM_TOKEN, CANARY_WEBHOOK_SECRET, runLogPath, startFakeTelegram, type FakeTelegram } from '../../src/index.js';
import { alice, aliceDm, BOTS, grammyError, makeBot, TOKEN_A, TOKEN_B } from './helpers.js';

let fake: FakeTelegram;
beforeAll(async () => {
  fake = await startFakeTelegram({ bots: BOTS });
});
afterAll(async () => {
  await fake.close();
});

describe('fake Telegram: fault injection', () => {
  it('429 with retry_after: grammY auto-retry waits and retries; without it a GrammyError carries retry_after', async () => {
    const bot = makeBot(fake);
    bot.api.config.use(autoRetry({ maxRetryAttempts: 2, maxDelaySeconds: 5 }));
    fake.failNext('sendMessage', { status: 429, retryAfter: 1 });
    const since = fake.calls.length;
    const started = Date.now();
    const m = await bot.api.sendMessage(2001, 'after a pause');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(m.text).toBe('after a pause');
    const tries = fake.calls.filter((c) => c.seq > since && c.method === 'sendMessage');
    expect(tries.map((c) => c.status)).toEqual([429, 200]);
    expect(tries[0]?.response).toEqual({ ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } });

    fake.failNext('sendMessage', { status: 429, retryAfter: 7 });
    const err = await grammyError(makeBot(fake).api.sendMessage(2001, 'x'));
    expect(err.error_code).toBe(429);
    expect(err.parameters.retry_after).toBe(7);
    expect(fake.sent(TOKEN_A, 2001).map((s) => s.text)).toEqual(['after a pause']);
  });

  it('5xx, 409 and 400-with-description envelopes; skip/times count calls', async () => {
    const api = makeBot(fake).api;
    const before = fake.events.length;
    fake.failNext('getMe', { status: 502 });
    expect(await grammyError(api.getMe())).toMatchObject({ error_code: 502, description: 'Bad Gateway' });
    fake.failNext('getUpdates', { status: 409 });
    expect((await grammyError(api.getUpdates())).description).toMatch(/^Conflict: terminated by other getUpdates request/);
    fake.failNext('sendMessage', { status: 400, description: 'Bad Request: chat not found' }, { skip: 1, times: 2 });
    await api.sendMessage(2002, 'passes');
    for (let i = 0; i < 2; i++) expect((await grammyError(api.sendMessage(2002, 'fails'))).description).toBe('Bad Request: chat not found');
    await api.sendMessage(2002, 'passes again');
    expect(fake.sent(TOKEN_A, 2002).map((s) => s.text)).toEqual(['passes', 'passes again']);
    fake.failNext('sendMessage', { status: 403 }, { token: TOKEN_B });
    await api.sendMessage(2002, 'bot A is unaffected');
    expect((await grammyError(makeBot(fake, TOKEN_B).api.sendMessage(2002, 'x'))).description).toBe('Forbidden: bot was blocked by the user');
    expect(fake.events.slice(before).filter((e) => e.type === 'fault-injected')).toHaveLength(5);
  });

  it('a non-JSON body or a dropped socket surfaces as HttpError', async () => {
    const api = makeBot(fake).api;
    fake.failNext('sendChatAction', { status: 502, rawBody: '<html>502 Bad Gateway</html>' });
    await expect(api.sendChatAction(2003, 'typing')).rejects.toBeInstanceOf(HttpError);
    fake.failNext('sendChatAction', { drop: true });
    await expect(api.sendChatAction(2003, 'typing')).rejects.toBeInstanceOf(HttpError);
    expect(await api.sendChatAction(2003, 'typing')).toBe(true);
  });

  it('unknown token → 401 Unauthorized; unknown method → 404; both are recorded', async () => {
    const stranger = new Bot('999:NOTregisteredTOKENxxxxxxxxxxxxxxxxxxx', { client: { apiRoot: fake.apiRoot }, botInfo: fake.botInfo(TOKEN_A) });
    const err = await grammyError(stranger.api.getMe());
    expect(err).toMatchObject({ error_code: 401, description: 'Unauthorized' });
    expect(fake.calls.at(-1)).toMatchObject({ bot: undefined, method: 'getMe', status: 401 });
    const res = await fetch(`${fake.apiRoot}/bot${TOKEN_A}/sendTelepathy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ ok: false, error_code: 404, description: 'Not Found: method not found' });
    const viaGrammy = await grammyError(
      (makeBot(fake).api.raw as unknown as Record<string, (p: object) => Promise<unknown>>).sendTelepathy?.({}) ?? Promise.resolve(),
    );
    expect(viaGrammy.error_code).toBe(404);
  });

  it('the run log records method and params but never the bot token or the webhook secret', async () => {
    const canary = await startFakeTelegram({ bots: [{ token: CANARY_TELEGRAM_TOKEN, username: 'canary_bot' }], logSource: 'fake-telegram-canary' });
    try {
      const bot = new Bot(CANARY_TELEGRAM_TOKEN, { client: { apiRoot: canary.apiRoot }, botInfo: canary.botInfo(CANARY_TELEGRAM_TOKEN) });
      await bot.api.sendMessage(aliceDm.id, 'log me please');
      await bot.api.setWebhook('https://example.com/hook', { secret_token: CANARY_WEBHOOK_SECRET });
      canary.failNext('sendMessage', { status: 500 });
      await grammyError(bot.api.sendMessage(aliceDm.id, 'x'));
      const up = canary.sendUserMessage(CANARY_TELEGRAM_TOKEN, { chat: aliceDm, from: alice, document: { content: 'abc', file_name: 'a.txt' } });
      const file = await bot.api.getFile(up.message?.document?.file_id ?? '');
      await fetch(`${canary.apiRoot}/file/bot${CANARY_TELEGRAM_TOKEN}/${file.file_path ?? ''}`).then((r) => r.text());
      expect(canary.webhook(CANARY_TELEGRAM_TOKEN)?.secret_token).toBe(CANARY_WEBHOOK_SECRET);
      const log = readFileSync(runLogPath(), 'utf8');
      const mine = log.split('\n').filter((l) => l.startsWith('[fake-telegram-canary]'));
      expect(mine.some((l) => l.includes('"method":"sendMessage"') && l.includes('log me please') && l.includes('"bot":"canary_bot"'))).toBe(true);
      expect(mine.some((l) => l.includes('"secret_token":"[redacted]"'))).toBe(true);
      expect(mine.some((l) => l.startsWith('[fake-telegram-canary] file download canary_bot'))).toBe(true);
      expect(log.includes(CANARY_TELEGRAM_TOKEN)).toBe(false);
      expect(log.includes(CANARY_WEBHOOK_SECRET)).toBe(false);
      expect(JSON.stringify(canary.calls).includes(CANARY_TELEGRAM_TOKEN)).toBe(false);
    } finally {
      await canary.close();
    }
  });
});
