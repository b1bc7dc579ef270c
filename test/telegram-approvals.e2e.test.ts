import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALICE, BOB, control, GROUP, params, person, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';
import { findInWorkspaces } from './helpers.js';

const CAROL = person(1003, 'Carol');

const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id), String(BOB.user.id)], groups: { [String(GROUP.id)]: { requireMention: true } } },
  { agents: { default: { systemPrompt: 'You are a test assistant.', mode: 'default' } } },
);

const answers = (from: number) =>
  env.tg
    .callbackAnswers(TOKEN)
    .slice(from)
    .map((a) => a.text ?? '');

describe('telegram: approvals with inline buttons', () => {
  it('Approve writes the file; a foreign, an unknown and a second press are refused with a reason; one decision is recorded', async () => {
    const { tg, model, gw } = env;
    // Alice and Bob become known principals (allowlisted DMs link them).
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'hi' });
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'hi' });
    await waitForText(tg, ALICE.dm.id, 'echo: hi');
    await waitForText(tg, BOB.dm.id, 'echo: hi');

    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'approved.txt', content: 'yes' }, id: 'toolu_tg1' }] }, { text: 'Written.' });
    tg.mentionBot(TOKEN, { chat: GROUP, from: ALICE.user, text: 'please write the file' });
    const request = await tg.waitForAnswered(
      (c) => c.method === 'sendMessage' && params(c).chat_id === GROUP.id && params(c).reply_markup !== undefined,
      15_000,
    );
    const shown = tg.sent(TOKEN, GROUP.id).find((m) => m.reply_markup)!;
    expect(shown.text).toContain('write_file');
    const buttons = shown.reply_markup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(['Approve', 'Deny', 'Always allow']);
    const approve = buttons[0]!.callback_data!;
    expect(Buffer.byteLength(approve)).toBeLessThanOrEqual(64);
    expect(request.status).toBe(200);
    expect(findInWorkspaces(gw, 'approved.txt')).toBeUndefined();

    let seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: BOB.user, message: { message_id: shown.message_id, chat: GROUP }, data: approve });
    await tg.waitForAnswered('answerCallbackQuery');
    expect(answers(seen)[0]).toMatch(/^You may not answer this approval: /);

    seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: CAROL.user, message: { message_id: shown.message_id, chat: GROUP }, data: approve });
    await tg.waitForAnswered((c) => c.method === 'answerCallbackQuery' && tg.callbackAnswers(TOKEN).length > seen);
    expect(answers(seen)[0]).toMatch(/not paired/);

    seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: shown.message_id, chat: GROUP }, data: approve });
    await waitForText(tg, GROUP.id, 'Written.', 15_000);
    expect(answers(seen)[0]).toMatch(/^Approved/);
    // A group works in its room's workspace.
    expect(readFileSync(join(gw.dataDir, 'workspaces', 'default', 'rooms', 'telegram', 'main', String(GROUP.id), 'approved.txt'), 'utf8')).toBe('yes');
    const edited = await waitForText(tg, GROUP.id, 'Approved by Alice');
    expect(params(edited).reply_markup).toBeUndefined();
    expect(tg.sent(TOKEN, GROUP.id).find((m) => m.message_id === shown.message_id)!.reply_markup).toBeUndefined();

    // A stale button (still on someone's screen) pressed again.
    seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: shown.message_id, chat: GROUP }, data: approve, unchecked: true });
    await tg.waitForAnswered((c) => c.method === 'answerCallbackQuery' && tg.callbackAnswers(TOKEN).length > seen);
    expect(answers(seen)[0]).toMatch(/^Already decided \(allowed/);

    const list = await control(gw, 'GET', '/approvals?status=allowed');
    const decided = (list.json.approvals as Array<{ tool: string; status: string }>).filter((a) => a.tool === 'write_file');
    expect(decided).toHaveLength(1);
    const all = await control(gw, 'GET', '/approvals');
    expect((all.json.approvals as Array<{ status: string }>).filter((a) => a.status !== 'pending')).toHaveLength(1);
  });
});
