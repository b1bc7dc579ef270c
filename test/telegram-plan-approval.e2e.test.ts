import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findInWorkspaces, toolResultFor } from './helpers.js';
import { ALICE, control, GROUP, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// The agent allows acceptEdits; the team room is in plan mode for everyone in it (a conversation-scope setting).
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], groups: { [String(GROUP.id)]: { requireMention: true, mode: 'plan' } } },
  { agents: { default: { systemPrompt: 'You are a test assistant.', mode: 'acceptEdits' } } },
);

const toolNames = (i: number) => (env.model.requests[i]?.body.tools ?? []).map((t) => t.name);

describe('telegram: plan approval with inline buttons', () => {
  it('a plan arrives with one button per mode and Keep planning; Proceed (accept edits) switches the session and the write runs', async () => {
    const { tg, model, gw } = env;
    const say = (text: string) => tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text });
    say('hi');
    await waitForText(tg, ALICE.dm.id, 'echo: hi');
    say('/mode plan');
    await waitForText(tg, ALICE.dm.id, 'Mode set to plan.');

    const before = model.requests.length;
    model.enqueue(
      { toolUses: [{ name: 'exit_plan_mode', input: { plan: '1. Write plan.txt.\n2. Report back.' }, id: 'toolu_tg_plan' }] },
      { toolUses: [{ name: 'write_file', input: { path: 'plan.txt', content: 'planned' }, id: 'toolu_tg_write' }] },
      { text: 'Planned and written.' },
    );
    say('make a plan, then do it');
    await tg.waitForAnswered((c) => c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id && params(c).reply_markup !== undefined, 15_000);
    expect(toolNames(before)).toContain('exit_plan_mode');
    const shown = tg.sent(TOKEN, ALICE.dm.id).find((m) => m.reply_markup)!;
    expect(shown.text).toContain('Proceed with this plan?');
    expect(shown.text).toContain('1. Write plan.txt.');
    const buttons = shown.reply_markup!.inline_keyboard.flat();
    // A plan is never "always allowed".
    expect(buttons.map((b) => b.text)).toEqual(['Proceed (ask before edits)', 'Proceed (accept edits)', 'Keep planning']);
    for (const b of buttons) expect(Buffer.byteLength(b.callback_data!)).toBeLessThanOrEqual(64);

    const seen = tg.callbackAnswers(TOKEN).length;
    tg.pressButton(TOKEN, { from: ALICE.user, message: { message_id: shown.message_id, chat: ALICE.dm }, data: buttons[1]!.callback_data! });
    await waitForText(tg, ALICE.dm.id, 'Planned and written.', 15_000);
    expect(tg.callbackAnswers(TOKEN).slice(seen)[0]?.text).toMatch(/^Approved: exit_plan_mode \(acceptEdits mode\)/);
    // acceptEdits: the write in the same turn ran without a second approval.
    expect(tg.sent(TOKEN, ALICE.dm.id).filter((m) => m.reply_markup)).toHaveLength(0);
    expect(readFileSync(findInWorkspaces(gw, 'plan.txt')!, 'utf8')).toBe('planned');
    expect(String(toolResultFor(model, 'toolu_tg_plan').content)).toMatch(/now in acceptEdits mode/);
    const approvals = (await control(gw, 'GET', '/approvals?status=allowed')).json.approvals as Array<Record<string, unknown>>;
    expect(approvals.find((a) => a.tool === 'exit_plan_mode')).toMatchObject({ source: 'plan', choice: 'acceptEdits', always: false });
    say('/status');
    await waitForText(tg, ALICE.dm.id, 'Mode: acceptEdits');
  });

  it('in a room whose mode is plan, exit_plan_mode is not offered and an invented call is refused', async () => {
    const { tg, model } = env;
    const before = model.requests.length;
    model.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan: 'let me out' }, id: 'toolu_tg_room' }] }, { text: 'Staying in plan.' });
    tg.mentionBot(TOKEN, { chat: GROUP, from: ALICE.user, text: 'leave plan mode' });
    await waitForText(tg, GROUP.id, 'Staying in plan.', 15_000);
    expect(toolNames(before)).toContain('read_file');
    expect(toolNames(before)).not.toContain('exit_plan_mode');
    const result = toolResultFor(model, 'toolu_tg_room');
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/no tool named "exit_plan_mode"/);
    expect(tg.sent(TOKEN, GROUP.id).filter((m) => m.reply_markup)).toHaveLength(0);
  });
});
