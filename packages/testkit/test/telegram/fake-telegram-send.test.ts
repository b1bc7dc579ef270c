import { InlineKeyboard } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeTelegram, TELEGRAM_DESCRIPTIONS, type FakeTelegram } from '../../src/index.js';
import { aliceDm, alice, BOTS, grammyError, group, makeBot, TOKEN_A, TOKEN_B } from './helpers.js';

const NOT_MODIFIED =
  'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';
it('TELEGRAM_DESCRIPTIONS holds the verbatim strings', () => {
  expect(TELEGRAM_DESCRIPTIONS.notModified).toBe(NOT_MODIFIED);
});

let fake: FakeTelegram;
beforeAll(async () => {
  fake = await startFakeTelegram({ bots: BOTS });
});
afterAll(async () => {
  await fake.close();
});

describe('fake Telegram: sending with real grammY', () => {
  it('getMe answers each bot by token; messages get per-chat ids and the bot as sender', async () => {
    const a = makeBot(fake);
    const b = makeBot(fake, TOKEN_B);
    expect(await a.api.getMe()).toMatchObject({ username: 'alpha_test_bot', is_bot: true, id: 7000001 });
    expect(await b.api.getMe()).toMatchObject({ username: 'bravo_test_bot', id: 7000002 });
    const m1 = await a.api.sendMessage(1001, 'one');
    const m2 = await a.api.sendMessage(1001, 'two');
    const other = await a.api.sendMessage(1002, 'elsewhere');
    const fromB = await b.api.sendMessage(1001, 'from bravo');
    expect([m1.message_id, m2.message_id, other.message_id, fromB.message_id]).toEqual([1, 2, 1, 1]);
    expect(m1).toMatchObject({ chat: { id: 1001, type: 'private' }, from: { id: 7000001, is_bot: true, username: 'alpha_test_bot' }, text: 'one' });
    expect(fake.sent(TOKEN_A, 1001).map((m) => m.text)).toEqual(['one', 'two']);
    expect(fake.sent(TOKEN_B, 1001).map((m) => m.text)).toEqual(['from bravo']);
  });

  it('records link_preview_options, parse_mode, reply_markup and reply_parameters', async () => {
    const bot = makeBot(fake);
    const first = await bot.api.sendMessage(1003, 'question');
    const kb = new InlineKeyboard().text('Yes', 'yes').text('No', 'no');
    const m = await bot.api.sendMessage(1003, '<b>Sure?</b> see https://example.com', {
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
      reply_markup: kb,
      reply_parameters: { message_id: first.message_id },
    });
    expect(m.text).toBe('Sure? see https://example.com');
    expect(m.entities).toEqual([
      { type: 'bold', offset: 0, length: 5 },
      { type: 'url', offset: 10, length: 19 },
    ]);
    expect(m.reply_to_message?.message_id).toBe(first.message_id);
    const [, sent] = fake.sent(TOKEN_A, 1003);
    expect(sent).toMatchObject({
      parse_mode: 'HTML',
      raw_text: '<b>Sure?</b> see https://example.com',
      link_preview_options: { is_disabled: true },
      reply_parameters: { message_id: first.message_id },
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Yes', callback_data: 'yes' },
            { text: 'No', callback_data: 'no' },
          ],
        ],
      },
    });
    const err = await grammyError(bot.api.sendMessage(1003, 'x', { reply_parameters: { message_id: 999 } }));
    expect(err.description).toBe('Bad Request: message to be replied not found');
    await bot.api.sendMessage(1003, 'x', { reply_parameters: { message_id: 999, allow_sending_without_reply: true } });
  });

  it('enforces 4096 UTF-16 code units after entity parsing', async () => {
    const bot = makeBot(fake);
    await bot.api.sendMessage(1004, 'a'.repeat(4096));
    await bot.api.sendMessage(1004, '😀'.repeat(2048));
    await bot.api.sendMessage(1004, `<b>${'a'.repeat(4096)}</b>`, { parse_mode: 'HTML' });
    for (const text of ['a'.repeat(4097), '😀'.repeat(2049)]) {
      const err = await grammyError(bot.api.sendMessage(1004, text));
      expect(err.error_code).toBe(400);
      expect(err.description).toBe('Bad Request: message is too long');
    }
    expect((await grammyError(bot.api.sendMessage(1004, '  \n '))).description).toBe('Bad Request: message text is empty');
  });

  it('rejects bad MarkdownV2 and HTML with "can\'t parse entities"', async () => {
    const bot = makeBot(fake);
    const cases: Array<[string, 'MarkdownV2' | 'HTML', string]> = [
      ['Done. Next', 'MarkdownV2', "Character '.' is reserved and must be escaped with the preceding '\\'"],
      ['*bold without end', 'MarkdownV2', "Can't find end of Bold entity at byte offset 0"],
      ['<b>x</i>', 'HTML', 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'],
      ['<b>open', 'HTML', 'Can\'t find end tag corresponding to start tag "b"'],
      ['<script>x</script>', 'HTML', 'Unsupported start tag "script" at byte offset 0'],
      ['1 < 2', 'HTML', 'Unsupported start tag "" at byte offset 2'],
    ];
    for (const [text, mode, why] of cases) {
      const err = await grammyError(bot.api.sendMessage(1005, text, { parse_mode: mode }));
      expect(err.description).toBe(`Bad Request: can't parse entities: ${why}`);
    }
    const ok = await bot.api.sendMessage(1005, '*Total:* 3\\.5 \\(approx\\)', { parse_mode: 'MarkdownV2' });
    expect(ok.text).toBe('Total: 3.5 (approx)');
    expect(ok.entities).toEqual([{ type: 'bold', offset: 0, length: 6 }]);
  });

  it('editMessageText updates the visible text, keeps history, and refuses no-op and unknown edits', async () => {
    const bot = makeBot(fake);
    const m = await bot.api.sendMessage(1006, 'draft', { reply_markup: new InlineKeyboard().text('Stop', 'stop') });
    const edited = await bot.api.editMessageText(1006, m.message_id, 'draft…', { reply_markup: new InlineKeyboard().text('Stop', 'stop') });
    expect(edited).toMatchObject({ text: 'draft…', message_id: m.message_id });
    expect(typeof (edited as { edit_date?: number }).edit_date).toBe('number');
    const same = await grammyError(bot.api.editMessageText(1006, m.message_id, 'draft…', { reply_markup: new InlineKeyboard().text('Stop', 'stop') }));
    expect(same.description).toBe(NOT_MODIFIED);
    await bot.api.editMessageText(1006, m.message_id, 'final'); // no reply_markup: the keyboard goes away
    const [now] = fake.sent(TOKEN_A, 1006);
    expect(now?.text).toBe('final');
    expect(now?.reply_markup).toBeUndefined();
    expect(now?.history.map((v) => v.text)).toEqual(['draft', 'draft…', 'final']);
    const missing = await grammyError(bot.api.editMessageText(1006, 999, 'x'));
    expect(missing.description).toBe('Bad Request: message to edit not found');
  });

  it('editMessageReplyMarkup and deleteMessage', async () => {
    const bot = makeBot(fake);
    const m = await bot.api.sendMessage(1007, 'pick');
    const kb = new InlineKeyboard().text('A', 'a');
    await bot.api.editMessageReplyMarkup(1007, m.message_id, { reply_markup: kb });
    expect(fake.sent(TOKEN_A, 1007)[0]?.reply_markup).toEqual({ inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] });
    expect((await grammyError(bot.api.editMessageReplyMarkup(1007, m.message_id, { reply_markup: kb }))).description).toBe(NOT_MODIFIED);
    const long = await grammyError(bot.api.sendMessage(1007, 'x', { reply_markup: new InlineKeyboard().text('A', 'd'.repeat(65)) }));
    expect(long.description).toBe('Bad Request: BUTTON_DATA_INVALID');
    expect(await bot.api.deleteMessage(1007, m.message_id)).toBe(true);
    expect(fake.sent(TOKEN_A, 1007)).toEqual([]);
    expect(fake.sent(TOKEN_A, 1007, { includeDeleted: true })[0]).toMatchObject({ deleted: true, text: 'pick' });
    expect((await grammyError(bot.api.deleteMessage(1007, m.message_id))).description).toBe('Bad Request: message to delete not found');
  });

  it('sendChatAction, setMyCommands and getFile', async () => {
    const bot = makeBot(fake);
    expect(await bot.api.sendChatAction(1008, 'typing')).toBe(true);
    expect(fake.chatActions(TOKEN_A, 1008).map((a) => a.action)).toEqual(['typing']);
    expect((await grammyError(bot.api.sendChatAction(1008, 'dancing' as 'typing'))).description).toBe('Bad Request: wrong parameter action in request');
    await bot.api.setMyCommands([{ command: 'new', description: 'Start a new session' }]);
    expect(fake.commands(TOKEN_A)).toEqual([{ command: 'new', description: 'Start a new session' }]);
    expect(await bot.api.getMyCommands()).toEqual([{ command: 'new', description: 'Start a new session' }]);
    expect((await grammyError(bot.api.setMyCommands([{ command: 'Bad-Name', description: 'x' }]))).description).toBe('Bad Request: BOT_COMMAND_INVALID');

    const up = fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, caption: 'notes', document: { file_name: 'notes.txt', content: 'hello file' } });
    const doc = up.message?.document;
    expect(doc).toMatchObject({ file_name: 'notes.txt', file_size: 10 });
    const file = await bot.api.getFile(doc?.file_id ?? '');
    expect(file).toMatchObject({ file_id: doc?.file_id, file_size: 10, file_path: expect.stringMatching(/^documents\/.+\.txt$/) });
    const body = await fetch(`${fake.apiRoot}/file/bot${TOKEN_A}/${file.file_path ?? ''}`).then((r) => r.text());
    expect(body).toBe('hello file');
    const big = fake.sendUserMessage(TOKEN_A, { chat: aliceDm, from: alice, photo: [{ file_size: 1000 }, { file_size: 25 * 1024 * 1024 }] });
    expect((await grammyError(bot.api.getFile(big.message?.photo?.[1]?.file_id ?? ''))).description).toBe('Bad Request: file is too big');
    expect((await grammyError(bot.api.getFile('nope'))).description).toBe('Bad Request: invalid file_id');
  });

  it('with unknownChats "reject", sending to an unseen chat is 400 chat not found', async () => {
    const strict = await startFakeTelegram({ bots: BOTS, unknownChats: 'reject' });
    try {
      const bot = makeBot(strict);
      expect((await grammyError(bot.api.sendMessage(555, 'hi'))).description).toBe('Bad Request: chat not found');
      strict.sendUserMessage(TOKEN_A, { chat: group, from: alice, text: 'hello' });
      const m = await bot.api.sendMessage(group.id, 'hi all');
      expect(m.chat).toMatchObject({ id: group.id, type: 'supergroup', title: 'Test group' });
      expect(m.message_id).toBe(2); // the user's message took id 1 in that chat
    } finally {
      await strict.close();
    }
  });

  it('waitFor resolves on a matching call (past or future) and times out otherwise', async () => {
    const bot = makeBot(fake);
    const since = fake.calls.length;
    const later = fake.waitFor((c) => c.method === 'sendMessage' && c.params.text === 'later', 2000, since);
    void bot.api.sendMessage(1009, 'later');
    const call = await later;
    expect(call.bot).toBe('alpha_test_bot');
    const answered = await fake.waitForAnswered((c) => c.seq === call.seq);
    expect(answered.response).toMatchObject({ ok: true, result: { text: 'later' } });
    await expect(fake.waitFor('sendPoll', 200)).rejects.toThrow(/timed out after 200 ms/);
  });
});
