import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Storage, TokenRecord } from '@switchboard/core';
import { ConsoleSessions } from '../src/console/console-sessions.js';
import { readSessionCookie, sessionCookie } from '../src/console/cookies.js';
import { isReserved } from '../src/console/static-site.js';
import { parseTestConfig } from './config-fixture.js';

const token = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  id: 'tok-1',
  kind: 'operator',
  name: 'op',
  principalId: null,
  scopes: ['read'],
  createdAt: new Date(0),
  revokedAt: null,
  expiresAt: null,
  lastUsedAt: null,
  createdBy: null,
  ...over,
});

/** A store with one token, as `tokens.get` reads it. */
const storageWith = (t: () => TokenRecord | null) => ({ tokens: { get: async () => t() }, principals: { get: async () => null } }) as unknown as Storage;

describe('console config', () => {
  it('defaults, and normalises basePath', () => {
    const cfg = parseTestConfig('{}');
    expect(cfg.console).toMatchObject({ enabled: true, basePath: '/', sessionTtl: 12 * 3_600_000, statsInterval: 5000, pingInterval: 15_000 });
    expect(cfg.console.publicOrigin).toBeUndefined();
    expect(parseTestConfig('{ console: { basePath: "console" } }').console.basePath).toBe('/console/');
    expect(parseTestConfig('{ console: { basePath: "/a/b//" } }').console.basePath).toBe('/a/b/');
    expect(parseTestConfig('{ console: { publicOrigin: "https://sb.example.com/" } }').console.publicOrigin).toBe('https://sb.example.com');
  });

  it('refuses a bad basePath, publicOrigin or duration, naming the key', () => {
    expect(() => parseTestConfig('{ console: { basePath: "/../x/" } }')).toThrow(/console\.basePath/);
    expect(() => parseTestConfig('{ console: { basePath: "/a b/" } }')).toThrow(/console\.basePath/);
    expect(() => parseTestConfig('{ console: { publicOrigin: "https://x.example/path" } }')).toThrow(/console\.publicOrigin/);
    expect(() => parseTestConfig('{ console: { publicOrigin: "javascript:alert(1)" } }')).toThrow(/console\.publicOrigin/);
    expect(() => parseTestConfig('{ console: { sessionTtl: "forever" } }')).toThrow(/console\.sessionTtl/);
    expect(() => parseTestConfig('{ console: { statsInterval: "10ms" } }')).toThrow(/console\.statsInterval/);
    expect(() => parseTestConfig('{ console: { colour: "blue" } }')).toThrow(/console\.colour|colour/);
  });
});

describe('the session cookie parser', () => {
  it('reads exactly one well-formed swb_session value', () => {
    const v = 'A'.repeat(43);
    expect(readSessionCookie(`a=b; swb_session=${v}; c=d`)).toBe(v);
    expect(readSessionCookie(`swb_session=${v}; swb_session=${v}`)).toBeNull();
    expect(readSessionCookie('swb_session=short')).toBeNull();
    expect(readSessionCookie(`swb_session=${v}"`)).toBeNull();
    expect(readSessionCookie(undefined)).toBeNull();
    expect(readSessionCookie(`xswb_session=${v}`)).toBeNull();
  });

  it('never throws and returns only safe values on hostile headers', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 400 }),
          fc.constantFrom('__proto__=1', 'swb_session=__proto__', 'swb_session=constructor', ';;=;=', 'x'.repeat(20_000)),
        ),
        (h) => {
          const v = readSessionCookie(h);
          expect(v === null || /^[A-Za-z0-9_-]{20,200}$/.test(v)).toBe(true);
        },
      ),
    );
  });

  it('sets the flags', () => {
    expect(sessionCookie('v'.repeat(43), 60, false)).toBe(`swb_session=${'v'.repeat(43)}; Max-Age=60; Path=/; HttpOnly; SameSite=Strict`);
    expect(sessionCookie('v'.repeat(43), 60, true)).toMatch(/; Secure$/);
  });
});

describe('reserved prefixes', () => {
  it('matches a prefix and what is under it, never a longer name', () => {
    expect(isReserved('/api')).toBe(true);
    expect(isReserved('/api/v1/x')).toBe(true);
    expect(isReserved('/CHANNELS/telegram')).toBe(true);
    expect(isReserved('/apiary')).toBe(false);
    expect(isReserved('/approvals')).toBe(false);
  });
});

describe('ConsoleSessions', () => {
  it('ends a session at its TTL, never after its token expires, and on revocation', async () => {
    let now = 1_000_000;
    let stored: TokenRecord | null = token();
    const sessions = new ConsoleSessions({ storage: storageWith(() => stored), ttlMs: 60_000 }, () => now);
    const ended: string[] = [];
    sessions.onEnd((s) => ended.push(s.tokenId));
    const a = sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    expect(a.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessions.resolve(a.cookie)).not.toBeNull();
    now += 60_000;
    expect(await sessions.resolve(a.cookie)).toBeNull();
    expect(ended).toEqual(['tok-1']);

    const short = token({ expiresAt: new Date(now + 1000) });
    const b = sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, short);
    expect(b.session.expiresAt.getTime()).toBe(now + 1000);

    const c = sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    stored = token({ revokedAt: new Date(now) });
    expect(await sessions.resolve(c.cookie)).toBeNull();
    stored = token();
    const d = sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    sessions.onAccessChange({ type: 'token_revoked', tokenId: 'tok-1' });
    expect(await sessions.resolve(d.cookie)).toBeNull();
    expect(sessions.size).toBe(0);
  });

  it('keeps at most 50 sessions per token, ending its own oldest first', async () => {
    const sessions = new ConsoleSessions({ storage: storageWith(() => token()), ttlMs: 60_000 });
    const other = sessions.open({ kind: 'operator', name: 'op2', scopes: ['read'] }, token({ id: 'tok-2' }));
    const first = sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    for (let i = 0; i < 50; i++) sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    expect(sessions.size).toBe(51);
    expect(await sessions.resolve(first.cookie)).toBeNull();
    expect(sessions.size).toBe(51);
    expect(await sessions.resolve(other.cookie)).not.toBeNull();
  });

  it('a wrong or malformed cookie resolves to nothing', async () => {
    const sessions = new ConsoleSessions({ storage: storageWith(() => token()), ttlMs: 60_000 });
    sessions.open({ kind: 'operator', name: 'op', scopes: ['read'] }, token());
    expect(await sessions.resolve('B'.repeat(43))).toBeNull();
    expect(await sessions.resolve('')).toBeNull();
  });
});

describe('LiveFeed', () => {
  it('counts turns of the last minute and model latency and errors of the last 5 minutes', async () => {
    const { LiveFeed } = await import('../src/console/live-feed.js');
    let now = 10_000_000;
    const feed = new LiveFeed(() => now);
    const seen: string[] = [];
    feed.on((e) => seen.push(e.type));
    const end = { channel: 'websocket', account: 'default', agentId: 'default', state: 'completed', reason: 'completed', durationMs: 5 } as const;
    expect(feed.stats()).toEqual({ turnsPerMinute: 0, modelLatencyMs: { p50: null, p95: null }, modelErrors: 0, modelCalls: 0 });
    for (const ms of [100, 200, 300, 400, 1000]) feed.modelCall('m', ms / 1000, {});
    feed.modelCall('m', 9, null);
    feed.turnEnded(end as never);
    expect(feed.stats()).toEqual({ turnsPerMinute: 1, modelLatencyMs: { p50: 300, p95: 1000 }, modelErrors: 1, modelCalls: 6 });
    now += 61_000;
    expect(feed.stats().turnsPerMinute).toBe(0);
    expect(feed.stats().modelCalls).toBe(6);
    now += 5 * 60_000;
    expect(feed.stats()).toMatchObject({ modelLatencyMs: { p50: null, p95: null }, modelErrors: 0, modelCalls: 0 });
    expect(seen).toEqual(['turn.ended']);
  });
});
