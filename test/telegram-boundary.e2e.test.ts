import { describe, expect, it } from 'vitest';
import type { TgChat } from '@switchboard/testkit';
import { ALICE, BOB, control, GROUP, params, person, texts, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const OTHER_GROUP: TgChat = { id: -100999888, type: 'supergroup', title: 'Not on the list' };

const env = useTelegramEnv({
  dmPolicy: 'pairing',
  allowFrom: [String(ALICE.user.id)],
  groupPolicy: 'allowlist',
  groups: { [String(GROUP.id)]: { requireMention: true } },
  mentionPatterns: ['^hey switchboard\\b'],
  maxInboundMediaBytes: 1024 * 1024,
});

describe('telegram: the boundary', () => {
  it('an unknown DM sender gets a pairing code and no model call; once approved their messages are answered', async () => {
    const { tg, model, gw } = env;
    const calls = model.requests.length;
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: '/start' });
    const notice = await waitForText(tg, BOB.dm.id, 'pairing code');
    const code = /code is ([A-HJ-NP-Z2-9]{8})/.exec(String(params(notice).text))![1]!;
    expect(model.requests.length).toBe(calls);
    const approved = await control(gw, 'POST', `/pairing/${code}/approve`, {});
    expect(approved.status).toBe(200);
    // The held /start is answered after approval, then the next DM too.
    await waitForText(tg, BOB.dm.id, 'echo: /start');
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'thanks, now a real question' });
    await waitForText(tg, BOB.dm.id, 'echo: thanks, now a real question');
  });

  it('in a group: no mention is ignored; a mention, a reply to the bot and a pattern are answered in the group', async () => {
    const { tg, model } = env;
    const before = model.requests.length;
    tg.sendUserMessage(TOKEN, { chat: GROUP, from: ALICE.user, text: 'just chatting among ourselves' });
    tg.mentionBot(TOKEN, { chat: GROUP, from: ALICE.user, text: 'what is the plan?' });
    const answer = await waitForText(tg, GROUP.id, 'what is the plan?');
    expect(params(answer).chat_id).toBe(GROUP.id);
    expect(model.requests.length).toBe(before + 1);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).not.toContain('just chatting');

    const botMsg = tg.sent(TOKEN, GROUP.id).at(-1)!;
    tg.replyToBot(TOKEN, { to: { message_id: botMsg.message_id, chat: GROUP }, from: BOB.user, text: 'and after that?' });
    await waitForText(tg, GROUP.id, 'and after that?');
    const replyRequest = JSON.stringify(model.requests.at(-1)!.body.messages);
    expect(replyRequest).toContain('In reply to your message');

    tg.sendUserMessage(TOKEN, { chat: GROUP, from: BOB.user, text: 'hey switchboard how are you' });
    await waitForText(tg, GROUP.id, 'echo: hey switchboard how are you');
  });

  it('a group that is not on the allowlist is ignored and logged', async () => {
    const { tg, model, gw } = env;
    const before = model.requests.length;
    tg.mentionBot(TOKEN, { chat: OTHER_GROUP, from: ALICE.user, text: 'anyone here?' });
    await gw.waitForLog((l) => l.includes('telegram_not_admitted') && l.includes(String(OTHER_GROUP.id)), 15_000);
    expect(model.requests.length).toBe(before);
    expect(texts(tg, OTHER_GROUP.id)).toHaveLength(0);
  });

  it('bots never reach the model; oversized media is refused politely', async () => {
    const { tg, model, gw } = env;
    const before = model.requests.length;
    const robot = { id: 7007, is_bot: true, first_name: 'Other bot' };
    tg.sendUserMessage(TOKEN, { chat: { id: 7007, type: 'private', first_name: 'Other bot' }, from: robot, text: 'beep' });
    tg.mentionBot(TOKEN, { chat: GROUP, from: robot, text: 'beep boop' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, caption: 'look at this', document: { file_name: 'big.bin', file_size: 5 * 1024 * 1024 } });
    const refusal = await waitForText(tg, ALICE.dm.id, 'too large');
    expect(String(params(refusal).text)).toContain('1 MB');
    // A small file with a caption is passed on as text (the caption and a note).
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, caption: 'small one', document: { file_name: 'a.txt', file_size: 10 } });
    await waitForText(tg, ALICE.dm.id, 'small one');
    expect(model.requests.length).toBe(before + 1);
    expect(gw.logs().join('\n')).not.toContain('beep');
    const carol = person(1003, 'Carol');
    expect(texts(tg, carol.dm.id)).toHaveLength(0);
  });
});
