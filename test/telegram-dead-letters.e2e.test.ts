import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { ALICE, control, isFinal, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Acceptance 2 of issue 11: an update the inbox genuinely refuses (over limits.inboxMaxBytes).
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], retryBaseDelay: 200 },
  { limits: { inboxMaxBytes: 2048, inboxMaxAttempts: 3 } },
);

describe('telegram: dead letters', () => {
  it('dead-letters an update the inbox refuses after inboxMaxAttempts, apologises, answers the next one, and lists it', async () => {
    const { tg, model, gw } = env;
    await tg.waitForAnswered('getUpdates');
    const big = tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: `too long ${'x'.repeat(4000)}` });
    model.enqueue({ text: 'Answer to the short one.' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'a short one' });
    await waitForText(tg, ALICE.dm.id, 'could not process your last message', 20_000);
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 20_000);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).not.toContain('too long');
    const attempts = gw.logs().filter((l) => l.includes('telegram_store_failed'));
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toContain('limits.inboxMaxBytes');
    await gw.waitForLog(/"event":"dead_letter"/);

    const res = await control(gw, 'GET', '/inbox/dead-letters');
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(1);
    const [d] = res.json.deadLetters;
    expect(d).toMatchObject({
      channel: 'telegram:main',
      dedupeKey: String(big.update_id),
      conversation: String(ALICE.dm.id),
      sender: `telegram:${ALICE.user.id}`,
      attempts: 3,
    });
    expect(d.error).toMatch(/over limits\.inboxMaxBytes \(2048\)/);
    expect(d.summary).toMatch(/^message: too long x+… \(4009 characters\)$/);
    // Details need a read token; the public answer stays minimal.
    const ready = await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken });
    expect(ready.json.deadLetters).toMatchObject({ count: 1, latest: { channel: 'telegram:main' } });
    expect((await api(gw, 'GET', '/readyz')).json.deadLetters).toBeUndefined();
    // The route is in the OpenAPI document with its scope, and needs a token.
    const doc = (await api(gw, 'GET', '/api/v1/openapi.json')).json;
    expect(doc.paths['/api/v1/inbox/dead-letters'].get['x-switchboard-scope']).toBe('read');
    expect((await api(gw, 'GET', '/api/v1/inbox/dead-letters')).status).toBe(401);
    // The offset moved past it: nothing is pending at the fake.
    expect(tg.pendingUpdates(TOKEN)).toEqual([]);
  });
});
