import { HttpError, InlineKeyboard } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeTelegram, type FakeTelegram, type TgEvent, type TgMessage } from '../../src/index.js';
import { alice, aliceDm, bob, BOTS, grammyError, group, makeBot, TOKEN_A, TOKEN_B } from './helpers.js';

let fake: FakeTelegram;
beforeAll(async () => {
  fake = await startFakeTelegram({ bots: BOTS });
});
afterAll(async () => {
  await fake.close();
});

/** Waits until a getUpdates call of `bot` that arrived after `since` is being held open. */
function pollHeld(since: number, bot = 'alpha_test_bot') {
  return fake.waitForEvent((e) => e.type === 'poll-started' && e.bot === bot && (e.call ?? 0) > since);
}

/** The conversation of the bot.start() test: each step waits for the bot's answer; returns the last call's seq. */
async function converse(seen: string[]): Promise<number> {
  fake.sendUserMessage(TOKEN_B, { chat: aliceDm, from: alice, text: '/start' });
  fake.sendUserMessage(TOKEN_B, { chat: aliceDm, from: alice, text: 'hello' });
  await fake.waitForAnswered((c) => c.method === 'sendMessage' && c.params.text === 'echo hello');
  expect(fake.sent(TOKEN_B, aliceDm.id).map((m) => m.text)).toEqual(['welcome', 'echo hello']);

  const mention = fake.mentionBot(TOKEN_B, { chat: group, from: bob, text: 'what time is it?' });
  expect(mention.message?.entities?.[0]).toEqual({ type: 'mention', offset: 0, length: '@bravo_test_bot'.length });
  const promptCall = await fake.waitForAnswered((c) => c.method === 'sendMessage' && c.params.text === 'Pick one');
  const prompt = promptCall.response?.result as TgMessage;
  fake.pressButton(TOKEN_B, { from: bob, message: prompt, data: 'yes' });
  await fake.waitForAnswered('editMessageText');
  expect(fake.callbackAnswers(TOKEN_B)).toMatchObject([{ text: 'noted' }]);
  expect(fake.sent(TOKEN_B, group.id)[0]).toMatchObject({ text: 'You picked yes', history: [{ text: 'Pick one' }, { text: 'You picked yes' }] });
  expect(() => fake.pressButton(TOKEN_B, { from: bob, message: prompt, data: 'yes' })).toThrow(/no button/);

  fake.replyToBot(TOKEN_B, { to: prompt, from: bob, text: 'thanks' });
  const last = await fake.waitForAnswered((c) => c.method === 'sendMessage' && c.params.text === 'echo thanks');
  expect(seen).toEqual(['text:hello', 'mention:@bravo_test_bot what time is it?', 'button:yes', 'reply:thanks']);
  return last.seq;
}

describe('fake Telegram: long polling with real grammY', () => {
  it('bot.start() receives injected messages, mentions, replies and button presses; bot.stop() confirms them', async () => {
    const bot = makeBot(fake, TOKEN_B);
    const seen: string[] = [];
    bot.command('start', (ctx) => ctx.reply('welcome'));
    bot.on('message::mention', async (ctx) => {
      seen.push(`mention:${ctx.message.text ?? ''}`);
      await ctx.reply('Pick one', { reply_markup: new InlineKeyboard().text('Yes', 'yes') });
    });
    bot.callbackQuery('yes', async (ctx) => {
      seen.push(`button:${ctx.callbackQuery.data}`);
      await ctx.answerCallbackQuery({ text: 'noted' });
      await ctx.editMessageText('You picked yes');
    });
    bot.on('message:text', async (ctx) => {
      const toMe = ctx.message.reply_to_message?.from?.id === ctx.me.id;
      seen.push(`${toMe ? 'reply' : 'text'}:${ctx.message.text}`);
      await ctx.reply(`echo ${ctx.message.text}`);
    });
    const since = fake.calls.length;
    const running = bot.start();
    let idle: TgEvent | undefined;
    try {
      await pollHeld(since, 'bravo_test_bot');
      const last = await converse(seen);
      idle = await pollHeld(last, 'bravo_test_bot'); // grammY is back in a long poll
    } finally {
      await bot.stop();
      await running;
    }
    await fake.waitForEvent((e) => e.type === 'poll-closed' && e.call === idle?.call); // stop() aborted it
    expect(fake.pendingUpdates(TOKEN_B)).toEqual([]); // stop() confirmed the offset
  });

  it('getUpdates honours offset, limit and allowed_updates; a negative offset keeps the tail', async () => {
    const api = makeBot(fake).api;
    const prompt = await api.sendMessage(aliceDm.id, 'choose', { reply_markup: new InlineKeyboard().text('Go', 'go') });
    const u1 = fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, text: 'one' });
    fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, text: 'two' });
    const u3 = fake.pressButton(TOKEN_A, { from: alice, message: prompt as TgMessage, data: 'go' });
    expect((await api.getUpdates({ limit: 2 })).map((u) => u.update_id)).toEqual([u1.update_id, u1.update_id + 1]);
    expect((await api.getUpdates({ offset: u1.update_id + 1 })).map((u) => u.message?.text ?? u.callback_query?.data)).toEqual(['two', 'go']);
    expect((await api.getUpdates({ offset: -1 })).map((u) => u.update_id)).toEqual([u3.update_id]);
    fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, text: 'three' });
    const only = await api.getUpdates({ allowed_updates: ['callback_query'] });
    expect(only.map((u) => u.update_id)).toEqual([u3.update_id]);
    await api.getUpdates({ offset: u3.update_id + 1, allowed_updates: [] });
    expect(fake.pendingUpdates(TOKEN_A)).toEqual([]);
  });

  it('a long poll is held until an update arrives, or answers [] when its timeout passes', async () => {
    const api = makeBot(fake).api;
    let since = fake.calls.length;
    const held = api.getUpdates({ timeout: 10 });
    await pollHeld(since);
    const injected = fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, text: 'wake up' });
    expect(await held).toEqual([injected]);
    since = fake.calls.length;
    const started = Date.now();
    expect(await api.getUpdates({ offset: injected.update_id + 1, timeout: 1 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a newer getUpdates terminates the pending one with 409', async () => {
    const api = makeBot(fake).api;
    const since = fake.calls.length;
    const first = api.getUpdates({ timeout: 10 });
    await pollHeld(since);
    const second = api.getUpdates({ timeout: 10 });
    const err = await grammyError(first);
    expect(err.error_code).toBe(409);
    expect(err.description).toBe('Conflict: terminated by other getUpdates request; make sure that only one bot instance is running');
    const u = fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, text: 'for the second' });
    expect(await second).toEqual([u]);
    await api.getUpdates({ offset: u.update_id + 1 });
  });

  it('while a webhook is set getUpdates answers 409; deleteWebhook clears it', async () => {
    const api = makeBot(fake).api;
    expect(await api.setWebhook('https://example.com/tg', { secret_token: 'hook_Secret-1' })).toBe(true);
    expect(fake.webhook(TOKEN_A)).toMatchObject({ url: 'https://example.com/tg', secret_token: 'hook_Secret-1' });
    expect((await api.getWebhookInfo()).url).toBe('https://example.com/tg');
    const err = await grammyError(api.getUpdates());
    expect(err.error_code).toBe(409);
    expect(err.description).toBe("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    expect((await grammyError(api.setWebhook('http://example.com/tg'))).description).toBe(
      'Bad Request: bad webhook: An HTTPS URL must be provided for webhook',
    );
    expect(await api.deleteWebhook()).toBe(true);
    expect(await api.getUpdates()).toEqual([]);
  });
});

describe('fake Telegram: polling stall injection', () => {
  it('the stalled poll is never answered, even past its timeout; a new poll is served; the client closing it is recorded', async () => {
    const api = makeBot(fake, TOKEN_B).api;
    const ac = new AbortController();
    let settled = false;
    const since = fake.calls.length;
    // grammY's Node typings name the abort-controller shim's AbortSignal; the native one works at runtime
    const stalled = api.getUpdates({ timeout: 1 }, ac.signal as Parameters<typeof api.getUpdates>[1]);
    stalled.then(
      () => (settled = true),
      () => (settled = true),
    );
    const started = await pollHeld(since, 'bravo_test_bot');
    fake.stallPolling(TOKEN_B);
    expect((await fake.waitForStalledPoll(TOKEN_B)).call).toBe(started.call);

    const u = fake.sendUserMessage(TOKEN_B, { chat: aliceDm, from: alice, text: 'while stalled' });
    expect(await api.getUpdates({ timeout: 1 })).toEqual([u]); // a new request is served normally
    expect(await api.getUpdates({ offset: u.update_id + 1, timeout: 1 })).toEqual([]); // > 1 s later
    expect(settled).toBe(false);
    expect(fake.calls.find((c) => c.seq === started.call)?.response).toBeUndefined();

    ac.abort();
    const closed = await fake.waitForClosedStalledPoll(TOKEN_B);
    expect(closed).toMatchObject({ type: 'stalled-poll-closed', bot: 'bravo_test_bot', call: started.call });
    await expect(stalled).rejects.toBeInstanceOf(HttpError);
  });

  it('stallPolling with no poll pending stalls the next one (raw fetch client)', async () => {
    const eventsBefore = fake.events.length;
    fake.stallPolling(TOKEN_A);
    const ac = new AbortController();
    const since = fake.calls.length;
    const req = fetch(`${fake.apiRoot}/bot${TOKEN_A}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 0 }),
      signal: ac.signal,
    }).catch((e: unknown) => e);
    const stalledEvent = await fake.waitForStalledPoll(TOKEN_A, 5000, eventsBefore);
    expect(stalledEvent.call).toBeGreaterThan(since);
    ac.abort();
    expect((await fake.waitForClosedStalledPoll(TOKEN_A, 5000, eventsBefore)).call).toBe(stalledEvent.call);
    expect(await req).toBeInstanceOf(Error);
    expect(await makeBot(fake).api.getUpdates()).toEqual([]); // the next poll is normal again
  });
});
