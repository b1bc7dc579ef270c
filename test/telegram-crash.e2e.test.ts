import { describe, expect, it } from 'vitest';
import { ALICE, isFinal, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] });

describe('telegram: crash in the middle of a streamed reply', () => {
  it('after SIGKILL and restart the message is answered exactly once and no update is lost', async () => {
    const { tg, model } = env;
    const chat = ALICE.dm.id;
    model.enqueue({ text: 'A long answer that is streamed slowly and will be cut off by a crash.', holdAfterEvents: 5 });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'tell me something long' });
    await env.gw.waitForLog((l) => l.includes('telegram_draft_recorded'), 15_000);
    expect(tg.sent(TOKEN, chat)).toHaveLength(1);
    await env.gw.kill('SIGKILL');
    model.release();
    // Sent while the gateway is down: must be answered after the restart, not lost.
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'are you there?' });

    env.gw = await env.gw.restart();
    await waitForText(tg, chat, 'echo: tell me something long', 20_000);
    await waitForText(tg, chat, 'echo: are you there?', 20_000);

    const all = tg.sent(TOKEN, chat, { includeDeleted: true });
    const visible = tg.sent(TOKEN, chat);
    // The half-streamed draft became the final answer (edited in place), or was deleted and replaced.
    const answers = visible.filter((m) => m.text === 'echo: tell me something long');
    expect(answers).toHaveLength(1);
    expect(visible.filter((m) => m.text?.startsWith('A long answer'))).toHaveLength(0);
    expect(visible.map((m) => m.text)).toEqual(['echo: tell me something long', 'echo: are you there?']);
    // No final part was sent twice: each final text went out in exactly one send or edit.
    const finals = tg.calls.filter(isFinal(chat)).map((c) => String(params(c).text));
    expect(finals.filter((t) => t.includes('tell me something long'))).toHaveLength(1);
    expect(finals.filter((t) => t.includes('are you there?'))).toHaveLength(1);
    expect(all.length - visible.length).toBeLessThanOrEqual(1);
    // Each user message produced exactly one model turn after the restart (the resumed one and the new one).
    const asked = model.requests.map((r) => JSON.stringify(r.body.messages ?? []));
    expect(asked.filter((m) => m.includes('are you there?'))).toHaveLength(1);
  });
});
