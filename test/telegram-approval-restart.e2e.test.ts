import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ALICE, control, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';
import { findInWorkspaces } from './helpers.js';

const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] },
  { agents: { default: { systemPrompt: 'You are a test assistant.', mode: 'default' } }, limits: { shutdownGrace: '500ms' } },
);

const answers = (from: number) =>
  env.tg
    .callbackAnswers(TOKEN)
    .slice(from)
    .map((a) => a.text ?? '');
const cards = () => env.tg.sent(TOKEN, ALICE.dm.id).filter((m) => m.reply_markup);

describe('telegram: approval cards stay valid across a gateway restart', () => {
  it('a card sent before a restart still answers its approval afterwards (resolved against the stored approval); the turn completes', async () => {
    const { tg, model } = env;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'hi' });
    await waitForText(tg, ALICE.dm.id, 'echo: hi');
    model.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'tg-restart.txt', content: 'pressed after restart' }, id: 'toolu_tg_restart' }] },
      { text: 'Written after the restart.' },
    );
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'write the file' });
    await tg.waitForAnswered((c) => c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id && params(c).reply_markup !== undefined, 15_000);
    const card = cards()[0]!;
    const approve = card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!;

    // A graceful restart suspends the turn: its approval stays pending, in the database.
    env.gw = await env.gw.restart();
    // The card still offers its buttons: a suspended turn's approval is not closed.
    expect(tg.sent(TOKEN, ALICE.dm.id).find((m) => m.message_id === card.message_id)!.reply_markup).toBeDefined();
    const pending = await control(env.gw, 'GET', '/approvals?status=pending');
    expect(pending.json.approvals).toHaveLength(1);

    const seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: card.message_id, chat: ALICE.dm }, data: approve, unchecked: true });
    await waitForText(tg, ALICE.dm.id, 'Written after the restart.', 15_000);
    expect(answers(seen)[0]).toMatch(/^Approved/);
    const file = findInWorkspaces(env.gw, 'tg-restart.txt');
    expect(file && readFileSync(file, 'utf8')).toBe('pressed after restart');
    const decided = await control(env.gw, 'GET', '/approvals?status=allowed');
    expect(decided.json.approvals).toHaveLength(1);
  });

  it('a card of a stopped turn answers "cancelled", and the approval stays cancelled', async () => {
    const { tg, model } = env;
    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'tg-stopped.txt', content: 'never' }, id: 'toolu_tg_stop' }] });
    const before = cards().length;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'write another file' });
    await tg.waitForAnswered(() => cards().length > before, 15_000);
    const card = cards().at(-1)!;
    const approve = card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: '/stop' });
    await waitForText(tg, ALICE.dm.id, 'Stopped the running answer.');
    const approvalId = approve.split(':')[1]!;
    const cancelled = await control(env.gw, 'GET', '/approvals?status=cancelled');
    expect(cancelled.json.approvals.map((a: { id: string }) => a.id)).toContain(approvalId);

    const seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: card.message_id, chat: ALICE.dm }, data: approve, unchecked: true });
    await tg.waitForAnswered((c) => c.method === 'answerCallbackQuery' && tg.callbackAnswers(TOKEN).length > seen);
    expect(answers(seen)[0]).toMatch(/^Already decided \(cancelled/);
    expect(findInWorkspaces(env.gw, 'tg-stopped.txt')).toBeUndefined();
    const after = await control(env.gw, 'GET', '/approvals?status=cancelled');
    expect(after.json.approvals.map((a: { id: string }) => a.id)).toContain(approvalId);
  });
});
