import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedAnswer } from '../src/webhook-routes.js';

// The answer another replica stored for a signed message request (table shared_marks) is read
// back as outside input: anything but a well-formed answer is "not known yet" (null).

describe('a stored webhook answer', () => {
  it('reads back a stored answer; "pending" and anything malformed are null, never a throw', () => {
    const answer = { accepted: true as const, gate: 'admitted', duplicate: false, turnId: 'turn-1' };
    expect(storedAnswer(JSON.stringify(answer))).toEqual(answer);
    expect(storedAnswer('pending')).toBeNull();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.anything().map((v) => JSON.stringify(v) ?? ''),
          fc.record({ accepted: fc.anything(), gate: fc.anything(), duplicate: fc.anything(), turnId: fc.anything() }).map((v) => JSON.stringify(v)),
          fc.constantFrom('{"__proto__":{"accepted":true},"gate":"admitted","duplicate":false,"turnId":null}', JSON.stringify({ ...answer, extra: 1 })),
        ),
        (s) => {
          const r = storedAnswer(s);
          if (r !== null) expect(Object.keys(r).sort()).toEqual(['accepted', 'duplicate', 'gate', 'turnId']);
        },
      ),
    );
  });
});
