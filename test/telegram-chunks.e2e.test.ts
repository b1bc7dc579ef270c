import { describe, expect, it } from 'vitest';
import { ALICE, BOB, isFinal, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id), String(BOB.user.id)] });

describe('telegram: long answers, formatting and flood control', () => {
  it('a 9,000-character answer arrives as 3 messages split on line boundaries, in order', async () => {
    const { tg, model } = env;
    const lines = Array.from({ length: 150 }, (_, i) => `line ${String(i + 1).padStart(3, '0')}: ${'abcdefghij'.repeat(5)}`);
    const answer = lines.join('\n');
    expect(answer.length).toBeGreaterThanOrEqual(9000);
    model.enqueue({ text: answer });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'give me a long list' });
    await waitForText(tg, ALICE.dm.id, 'line 150:', 20_000);
    const msgs = tg.sent(TOKEN, ALICE.dm.id);
    expect(msgs).toHaveLength(3);
    expect(msgs.map((m) => m.message_id)).toEqual([...msgs.map((m) => m.message_id)].sort((a, b) => a - b));
    for (const m of msgs) {
      expect(m.text!.length).toBeLessThanOrEqual(4096);
      // Every message is a run of whole lines.
      for (const l of m.text!.split('\n')) expect(lines).toContain(l);
      expect(m.link_preview_options).toEqual({ is_disabled: true });
    }
    expect(msgs.map((m) => m.text).join('\n')).toBe(answer);
  });

  it('Markdown the Bot API cannot parse falls back to plain text; the reply never fails', async () => {
    const { tg, model } = env;
    const since = tg.calls.length;
    const parseError = { status: 400, description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3" };
    const text = 'Use **bold** <and> stray_underscores_here.';
    model.enqueue({ text, holdAfterEvents: 5 });
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'format something' });
    await tg.waitForAnswered((c) => c.seq > since && c.method === 'sendMessage' && params(c).chat_id === BOB.dm.id, 15_000);
    tg.failNext('editMessageText', parseError);
    model.release();
    const done = await waitForText(tg, BOB.dm.id, 'stray_underscores_here.', 15_000, since);
    const refused = tg.calls.find((c) => c.seq > since && c.method === 'editMessageText' && c.status === 400)!;
    expect(params(refused).parse_mode).toBe('HTML');
    const plain = await tg.waitForAnswered((c) => c.seq > refused.seq && c.method === 'editMessageText' && c.status === 200);
    expect(params(plain).parse_mode).toBeUndefined();
    expect(done.status).toBe(200);
    expect(tg.sent(TOKEN, BOB.dm.id).at(-1)!.text).toBe(text);

    // A first send (no draft) refused the same way is resent as plain text.
    const again = tg.calls.length;
    tg.failNext('sendMessage', parseError);
    model.enqueue({ text: 'Second **try** here.' });
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'again' });
    await tg.waitForAnswered(
      (c) => c.seq > again && c.method === 'sendMessage' && c.status === 200 && String(params(c).text) === 'Second **try** here.',
      15_000,
    );
    expect(tg.sent(TOKEN, BOB.dm.id).at(-1)!.text).toBe('Second **try** here.');
  });

  it('429 on sendMessage and editMessageText is retried after retry_after and the reply completes', async () => {
    const { tg, model } = env;
    const since = tg.calls.length;
    tg.failNext('sendMessage', { status: 429, retryAfter: 1 });
    tg.failNext('editMessageText', { status: 429, retryAfter: 1 });
    model.enqueue({ text: 'An answer that survives flood control.', holdAfterEvents: 5 });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'flood me' });
    await tg.waitForAnswered((c) => c.seq > since && c.method === 'sendMessage' && c.status === 200, 15_000);
    model.release();
    const final = await tg.waitForAnswered((c) => c.seq > since && isFinal(ALICE.dm.id)(c), 15_000);
    const limited = tg.calls.filter((c) => c.seq > since && c.status === 429);
    expect(limited.map((c) => c.method).sort()).toEqual(['editMessageText', 'sendMessage']);
    for (const c of limited) {
      const retry = tg.calls.find((r) => r.seq > c.seq && r.method === c.method && r.status === 200)!;
      expect(retry.at.getTime() - c.at.getTime()).toBeGreaterThanOrEqual(900);
    }
    expect(String(params(final).text)).toBe('An answer that survives flood control.');
    expect(tg.sent(TOKEN, ALICE.dm.id).at(-1)!.text).toBe('An answer that survives flood control.');
  });
});
