import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotentDedupeKey, readIdempotencyKey, readSessionLabel, RequestKeys } from '../src/headers.js';
import { paramName, parseChatRequest } from '../src/wire.js';

// Request bodies and headers come from any client on the network: hostile shapes must give a
// request or a 400 naming the field, never a throw, and never reach Object.prototype.

const INHERITED = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
const hostile = fc.oneof(
  fc.anything({ withObjectString: true, withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true }),
  fc.constantFrom(...INHERITED),
  fc.string({ minLength: 0, maxLength: 2000 }),
  fc.constant('x'.repeat(200_000)),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, 2 ** 53, null, undefined, [], {}),
);
const role = fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function');

/** Hostile values that survive the wire (JSON), as the route sees them after JSON.parse. */
const wire = fc.oneof(fc.jsonValue(), fc.constantFrom(...INHERITED), fc.constant('x'.repeat(200_000)), fc.constantFrom(-1, 2 ** 53, null, [], {}));

/** A plausible body with some fields replaced by hostile values and an inherited name as an own key, parsed from JSON text. */
const mangled = fc
  .tuple(
    fc.record(
      {
        model: fc.oneof(fc.constantFrom('default', 'helper'), wire),
        messages: fc.oneof(
          fc.array(
            fc.record({
              role: fc.oneof(role, wire),
              content: fc.oneof(fc.string(), wire, fc.array(fc.record({ type: fc.oneof(fc.constant('text'), wire), text: wire }))),
            }),
          ),
          wire,
        ),
        stream: fc.oneof(fc.boolean(), wire),
        stream_options: wire,
        n: fc.oneof(fc.constant(1), wire),
        temperature: wire,
        tools: wire,
      },
      { requiredKeys: [] },
    ),
    fc.constantFrom(...INHERITED),
  )
  .map(([o, k]) => JSON.parse(JSON.stringify({ ...o, [k]: { polluted: true } })) as unknown);

function checkAnswer(body: unknown): void {
  const r = parseChatRequest(body);
  if (r.ok) {
    expect(typeof r.request.agentId).toBe('string');
    expect(r.request.text.trim().length).toBeGreaterThan(0);
    expect(typeof r.request.stream).toBe('boolean');
  } else {
    expect(r.error.status).toBe(400);
    expect(r.error.type).toBe('invalid_request_error');
    expect(typeof r.error.param).toBe('string');
    expect(r.error.message).toContain(r.error.param!.replace(/\[\d+\].*$/, ''));
  }
}

describe('parseChatRequest (property)', () => {
  it('answers any value with a request or a 400 naming the field; never throws', () => {
    fc.assert(fc.property(hostile, checkAnswer), { numRuns: 500 });
  });

  it('answers mangled bodies (with inherited names as keys) the same way, and pollutes nothing', () => {
    fc.assert(
      fc.property(mangled, (body) => {
        checkAnswer(body);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('takes only the trailing user message of any valid history', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ role, content: fc.string({ maxLength: 50 }) }), { maxLength: 10 }),
        fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim().length > 0),
        (history, text) => {
          const r = parseChatRequest({ model: 'default', messages: [...history, { role: 'user', content: text }] });
          expect(r).toEqual({ ok: true, request: { agentId: 'default', text, stream: false, includeUsage: false } });
        },
      ),
    );
  });

  it('refuses a history whose last message is not the user’s, naming it', () => {
    const r = parseChatRequest({
      model: 'default',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    });
    expect(r.ok ? null : r.error.param).toBe('messages[1].role');
    const img = parseChatRequest({ model: 'default', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] });
    expect(img.ok ? null : img.error.param).toBe('messages[0].content[0].type');
    expect(paramName(['messages', 2, 'content', 0, 'text'])).toBe('messages[2].content[0].text');
  });
});

describe('header parsing (property)', () => {
  it('reads X-Switchboard-Session and Idempotency-Key from any value without throwing; only well-formed single values pass', () => {
    const value = fc.oneof(hostile, fc.array(fc.string()), fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), fc.string({ maxLength: 300 }));
    fc.assert(
      fc.property(value, (v) => {
        const s = readSessionLabel(v);
        if (s.ok) expect(s.value === null ? v === undefined : /^[A-Za-z0-9_-]{1,64}$/.test(s.value) && s.value === v).toBe(true);
        else expect(s.message).toMatch(/^X-Switchboard-Session: /);
        const k = readIdempotencyKey(v);
        if (k.ok) expect(k.value === null ? v === undefined : /^[\x21-\x7e]{1,255}$/.test(k.value) && k.value === v).toBe(true);
        else expect(k.message).toMatch(/^Idempotency-Key: /);
      }),
      { numRuns: 1000 },
    );
    expect(readSessionLabel(['a', 'b']).ok).toBe(false);
    expect(readSessionLabel('x'.repeat(65)).ok).toBe(false);
    expect(readSessionLabel('../etc').ok).toBe(false);
  });

  it('dedupes the same request within the window only, per token', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.option(fc.string()), fc.string(), fc.integer({ min: 0, max: 1e12 }), (tokenId, other, label, text, now) => {
        const keys = new RequestKeys(1000);
        const who = { tokenId, label, agentId: 'default', text };
        const first = keys.keyFor(who, null, now);
        expect(keys.keyFor(who, null, now + 999)).toBe(first);
        expect(keys.keyFor(who, null, now + 1000)).not.toBe(first);
        if (other !== tokenId) {
          expect(keys.keyFor({ ...who, tokenId: other }, null, now)).not.toBe(first);
          expect(idempotentDedupeKey(other, text)).not.toBe(idempotentDedupeKey(tokenId, text));
        }
        expect(keys.keyFor(who, text, now)).toBe(idempotentDedupeKey(tokenId, text));
      }),
    );
  });

  it('forgets the oldest remembered requests past its bound', () => {
    const keys = new RequestKeys(60_000, 3);
    const who = (text: string) => ({ tokenId: 't', label: null, agentId: 'default', text });
    const a = keys.keyFor(who('a'), null, 0);
    for (const t of ['b', 'c', 'd']) keys.keyFor(who(t), null, 1);
    expect(keys.keyFor(who('a'), null, 2)).not.toBe(a);
  });
});
