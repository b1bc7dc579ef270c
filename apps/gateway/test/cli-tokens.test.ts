import { describe, expect, it } from 'vitest';
import type { TokenRecord } from '@switchboard/core';
import { parseExpiry } from '../src/cli-tokens.js';
import { mintedBy } from '../src/tokens.js';

const tok = (id: string, createdBy: string | null, revoked = false): TokenRecord => ({
  id,
  kind: 'operator',
  name: id,
  principalId: null,
  scopes: ['read'],
  createdAt: new Date(0),
  revokedAt: revoked ? new Date(1) : null,
  expiresAt: null,
  lastUsedAt: null,
  createdBy,
});

describe('mintedBy (revoke --cascade)', () => {
  it('follows createdBy transitively, skips revoked tokens but still follows what they minted, and survives cycles', () => {
    const all = [tok('a', 'bootstrap'), tok('b', 'a'), tok('c', 'b', true), tok('d', 'c'), tok('e', 'x'), tok('f', 'f'), tok('g', 'h'), tok('h', 'g')];
    expect(mintedBy(all, 'a').map((t) => t.id)).toEqual(['b', 'd']);
    expect(mintedBy(all, 'f')).toEqual([]);
    expect(mintedBy(all, 'g').map((t) => t.id)).toEqual(['h']);
    expect(mintedBy(all, 'nobody')).toEqual([]);
  });
});

describe('parseExpiry (--expires)', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it('takes durations, days and ISO date-times in the future', () => {
    expect(parseExpiry(undefined, now)).toBeNull();
    expect((parseExpiry('12h', now) as Date).getTime()).toBe(now + 12 * 3_600_000);
    expect((parseExpiry('30d', now) as Date).getTime()).toBe(now + 30 * 86_400_000);
    expect((parseExpiry('2031-01-01T00:00:00Z', now) as Date).toISOString()).toBe('2031-01-01T00:00:00.000Z');
  });
  it('explains what it refuses', () => {
    expect(parseExpiry('soon', now)).toContain('--expires must be');
    expect(parseExpiry('2029-01-01T00:00:00Z', now)).toBe('--expires must be in the future');
    expect(parseExpiry('0s', now)).toBe('--expires must be in the future');
    expect(parseExpiry('2031-13-45T99:00:00Z', now)).toContain('--expires must be');
  });
});
