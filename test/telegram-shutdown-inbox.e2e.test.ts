import { describe, expect, it } from 'vitest';
import { ALICE, isFinal, storedOffset, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// An update refused because the gateway is shutting down never counts towards inboxMaxAttempts.
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], retryBaseDelay: 200 },
  { limits: { inboxMaxAttempts: 1, shutdownGrace: '30s' } },
);

describe('telegram: shutdown and the inbox', () => {
  it('a message arriving while the gateway drains is left for the next start, not dead-lettered', async () => {
    const { tg, model } = env;
    await tg.waitForAnswered('getUpdates');
    model.enqueue({ text: 'The long first answer.', holdAfterEvents: 3 });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'first' });
    await model.waitForRequests(1);
    env.gw.child.kill('SIGTERM');
    await env.gw.waitForLog(/"event":"stopping"/);
    const second = tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'second, during the drain' });
    await env.gw.waitForLog((l) => l.includes('"event":"telegram_update_deferred"') && l.includes(`"updateId":${second.update_id}`));
    model.release();
    await waitForText(tg, ALICE.dm.id, 'The long first answer.');
    expect((await env.gw.exited).code).toBe(0);
    expect(env.gw.logs().some((l) => l.includes('"event":"dead_letter"'))).toBe(false);
    const offset = await storedOffset(env.gw);
    expect(offset).toMatch(/^\d+$/);
    expect(Number(offset)).toBeLessThanOrEqual(second.update_id);
    // The next start answers it.
    model.enqueue({ text: 'Answer to the second.' });
    const since = tg.calls.length;
    env.gw = await env.gw.restart();
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 20_000, since);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain('second, during the drain');
  });
});
