import { describe, expect, it } from 'vitest';
import { ALL_CANARIES } from '@switchboard/testkit';
import { ALICE, control, isFinal, params, person, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const CAROL = person(1003, 'Carol');

const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] });

const say = (text: string, from = ALICE) => env.tg.sendUserMessage(TOKEN, { chat: from.dm, from: from.user, text });

describe('telegram: chat commands', () => {
  it('/status shows settings and never a secret; unknown senders may not run commands', async () => {
    const { tg, model } = env;
    say('hello');
    await waitForText(tg, ALICE.dm.id, 'echo: hello');
    say('/status');
    const status = String(params(await waitForText(tg, ALICE.dm.id, 'Model:')).text);
    expect(status).toContain('Model: claude-test');
    expect(status).toMatch(/Mode: \w+/);
    expect(status).toContain('Pending approvals: 0');
    for (const c of ALL_CANARIES) expect(status).not.toContain(c);
    const calls = model.requests.length;
    say('/status', CAROL);
    await waitForText(tg, CAROL.dm.id, 'You are not paired yet');
    expect(model.requests.length).toBe(calls);
  });

  it('/stop aborts a long-running turn', async () => {
    const { tg, model } = env;
    const since = tg.calls.length;
    model.enqueue({ text: 'A very long story that goes on and on and on for a long time.', holdAfterEvents: 5 });
    say('tell me a long story');
    await tg.waitForAnswered((c) => c.seq > since && c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id, 15_000);
    say('/stop');
    await waitForText(tg, ALICE.dm.id, 'Stopped the running answer.', 15_000, since);
    const final = await tg.waitForAnswered((c) => c.seq > since && isFinal(ALICE.dm.id)(c), 15_000);
    expect(String(params(final).text)).toContain('⚠️');
    model.release();
  });

  it('/new starts a fresh session: the next message is sent without the old history', async () => {
    const { tg, model, gw } = env;
    const before = (await control(gw, 'GET', '/sessions?channel=telegram')).json.sessions as Array<{ id: string; endedAt: string | null }>;
    say('/new');
    await waitForText(tg, ALICE.dm.id, 'Started a new session');
    say('first message of the new session');
    await waitForText(tg, ALICE.dm.id, 'echo: first message of the new session');
    const messages = model.requests.at(-1)!.body.messages!;
    expect(messages).toHaveLength(1);
    const after = (await control(gw, 'GET', '/sessions?channel=telegram')).json.sessions as Array<{ id: string; endedAt: string | null }>;
    expect(after.length).toBe(before.length + 1);
    expect(after.filter((s) => s.endedAt === null)).toHaveLength(1);
  });

  it('/mode changes the session mode within what the role allows', async () => {
    const { tg } = env;
    say('/mode plan');
    await waitForText(tg, ALICE.dm.id, 'Mode set to plan.');
    say('/mode bypassPermissions');
    await waitForText(tg, ALICE.dm.id, 'Mode not changed');
    say('/status');
    await waitForText(tg, ALICE.dm.id, 'Mode: plan');
  });
});
