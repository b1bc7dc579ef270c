import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_SCRUBBED_SECRET_LENGTH, scrubSecretValues } from '../src/secret-scrub.js';

const R = '[redacted]';

describe('scrubSecretValues', () => {
  it('never touches a message for a secret shorter than the minimum (a 1-char secret once gave "e[redacted]pected string")', () => {
    expect(scrubSecretValues('expected string, received number', ['x'])).toBe('expected string, received number');
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.array(fc.string({ maxLength: MIN_SCRUBBED_SECRET_LENGTH - 1 })), (msg, secrets) => {
        expect(scrubSecretValues(msg, secrets)).toBe(msg);
      }),
    );
  });

  it('removes every occurrence of every secret of the minimum length or more', () => {
    const secret = fc.string({ minLength: MIN_SCRUBBED_SECRET_LENGTH, maxLength: 40 }).filter((s) => !R.includes(s));
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 30 }), { maxLength: 6 }), fc.array(secret, { minLength: 1, maxLength: 4 }), (parts, secrets) => {
        // interleave secrets into the message
        const msg = parts.map((p, i) => `${p}${secrets[i % secrets.length]}`).join('');
        const out = scrubSecretValues(msg, secrets);
        for (const s of secrets) expect(out).not.toContain(s);
      }),
    );
  });

  it('leaves a message that contains no secret unchanged, whatever the secrets', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 6 }), (msg, secrets) => {
        fc.pre(secrets.every((s) => !msg.includes(s) || s.length < MIN_SCRUBBED_SECRET_LENGTH));
        expect(scrubSecretValues(msg, secrets)).toBe(msg);
      }),
    );
  });

  it('is total: non-string text and non-string secrets do not throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.array(fc.anything(), { maxLength: 4 }), (text, secrets) => {
        expect(typeof scrubSecretValues(text, secrets)).toBe('string');
      }),
    );
  });
});
