import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySlackSignature } from '../src/signature.js';

const SECRET = 'unit-test-signing-secret';
const body = Buffer.from('{"type":"event_callback"}');
const sign = (ts: number, b: Buffer | string = body, secret = SECRET) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:${b.toString()}`).digest('hex')}`;
const now = 1_700_000_000_000;
const ts = now / 1000;

describe('verifySlackSignature', () => {
  it('accepts a genuine request', () => {
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: sign(ts) }, body, now)).toBeNull();
  });

  it('refuses other secrets, other bodies, malformed and missing signatures', () => {
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: sign(ts, body, 'other') }, body, now)).toBe('bad_signature');
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: sign(ts) }, Buffer.from('{"type":"x"}'), now)).toBe('bad_signature');
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: 'v0=zz' }, body, now)).toBe('bad_signature');
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: sign(ts).replace('v0=', 'v1=') }, body, now)).toBe('bad_signature');
    expect(verifySlackSignature(SECRET, { timestamp: String(ts), signature: undefined }, body, now)).toBe('missing_headers');
  });

  it('enforces the ±300 s window in both directions', () => {
    for (const skew of [-300, 300]) expect(verifySlackSignature(SECRET, { timestamp: String(ts + skew), signature: sign(ts + skew) }, body, now)).toBeNull();
    for (const skew of [-301, 301])
      expect(verifySlackSignature(SECRET, { timestamp: String(ts + skew), signature: sign(ts + skew) }, body, now)).toBe('stale_timestamp');
    expect(verifySlackSignature(SECRET, { timestamp: '1e9', signature: sign(ts) }, body, now)).toBe('bad_timestamp');
  });
});
