import { describe, expect, it } from 'vitest';
import { ALICE, isFinal, readyHealth, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Acceptance 1 of issue 11: a Bot API that answers like an independent emulator does.
const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], retryBaseDelay: 200 });

describe('telegram: a fault in one call never ends the gateway', () => {
  it('survives {ok:false} without a description, a non-JSON 502 and a dropped connection; the DM is answered and /readyz explains', async () => {
    const { tg, model, gw } = env;
    await tg.waitForAnswered('getUpdates');
    // sendChatAction: `{ok:false}` and nothing else (no error_code, no description).
    tg.failNext('sendChatAction', { envelope: { ok: false } }, { times: 1000 });
    // The first sendMessage: a non-JSON 502 (grammY: HttpError from the JSON parse).
    tg.failNext('sendMessage', { status: 502, rawBody: '<html>502 Bad Gateway</html>' });
    // The next sendMessage: the connection is dropped without an answer.
    tg.failNext('sendMessage', { drop: true });
    let exited = false;
    void gw.exited.then(() => (exited = true));
    model.enqueue({ text: 'First answer despite the faults.' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'hello' });
    const died = gw.exited.then((x) => {
      throw new Error(`the gateway exited (code ${x.code}, signal ${x.signal}); last lines:\n${gw.logs().slice(-5).join('\n')}`);
    });
    await Promise.race([waitForText(tg, ALICE.dm.id, 'First answer despite the faults.', 30_000), died]);
    await gw.waitForLog(/typing/);
    expect(exited).toBe(false);
    const h = await readyHealth(gw);
    expect(h.state).toBe('degraded');
    expect(h.detail).toMatch(/typing/);
    expect(h.detail).toMatch(/no description/);
    // Still running: the next DM is answered too.
    const since = tg.calls.length;
    model.enqueue({ text: 'Second answer.' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'again' });
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 30_000, since);
    expect(exited).toBe(false);
    expect(gw.logs().join('\n')).not.toContain(TOKEN);
  });
});
