import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findInWorkspaces } from './helpers.js';
import { resultIn, scriptRoles, subagentConfig, subagentRequests } from './subagent-helpers.js';
import { ALICE, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] }, subagentConfig());

/** The approval card shown in Alice's DM after `since` sent messages, and its buttons. */
async function approvalCard(since: number) {
  const { tg } = env;
  const call = await tg.waitForAnswered(
    (c) => c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id && params(c).reply_markup !== undefined,
    15_000,
    since,
  );
  const card = tg.sent(TOKEN, ALICE.dm.id).find((m) => m.reply_markup && m.text === params(call).text)!;
  const [approve, deny] = card.reply_markup!.inline_keyboard.flat();
  return { card, approve: approve!.callback_data!, deny: deny!.callback_data! };
}

describe('telegram: a subagent’s approval reaches the parent’s chat (acceptance 2)', () => {
  it('the card names the subagent and its task; Approve lets it write, Deny gives the subagent its own denial text', async () => {
    const { tg, model } = env;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'hi' });
    await waitForText(tg, ALICE.dm.id, 'echo: hi');

    const start = model.requests.length;
    scriptRoles(
      model,
      [
        { toolUses: [{ name: 'task', id: 'toolu_tg_task1', input: { description: 'write the note', prompt: 'Write note.txt.' } }] },
        { text: 'Your note is written.' },
        { toolUses: [{ name: 'task', id: 'toolu_tg_task2', input: { description: 'write the secret', prompt: 'Write secret.txt.' } }] },
        { text: 'That write was declined.' },
      ],
      {
        'Write note.txt.': [{ toolUses: [{ name: 'write_file', id: 'toolu_tg_w1', input: { path: 'note.txt', content: 'tg note' } }] }, { text: 'Wrote it.' }],
        'Write secret.txt.': [{ toolUses: [{ name: 'write_file', id: 'toolu_tg_w2', input: { path: 'secret.txt', content: 'x' } }] }, { text: 'Declined.' }],
      },
    );
    let since = tg.calls.at(-1)?.seq ?? 0;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'write a note' });
    const first = await approvalCard(since);
    expect(first.card.text).toContain('🤖 general: write the note');
    expect(first.card.text).toContain('write_file');
    // The status line while the subagent works.
    expect(tg.sent(TOKEN, ALICE.dm.id).some((m) => m.history.some((h) => h.text.startsWith('🤖 general: write the note…')))).toBe(true);
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: first.card.message_id, chat: ALICE.dm }, data: first.approve });
    await waitForText(tg, ALICE.dm.id, 'Your note is written.');
    expect(readFileSync(findInWorkspaces(env.gw, 'note.txt')!, 'utf8')).toBe('tg note');

    since = tg.calls.at(-1)?.seq ?? 0;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'write a secret' });
    const second = await approvalCard(since);
    expect(second.card.text).toContain('🤖 general: write the secret');
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: second.card.message_id, chat: ALICE.dm }, data: second.deny });
    await waitForText(tg, ALICE.dm.id, 'That write was declined.');
    model.setHandler(undefined);
    const denied = resultIn(subagentRequests(model, start).at(-1)!, 'toolu_tg_w2')!;
    expect(denied.is_error).toBe(true);
    expect(denied.content).toMatch(/You are a subagent/);
    expect(findInWorkspaces(env.gw, 'secret.txt')).toBeUndefined();
  });
});
