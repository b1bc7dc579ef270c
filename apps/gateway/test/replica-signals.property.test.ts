import type { AccessChange } from '@switchboard/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromRow } from '../src/console/console-sessions.js';
import { accessChangeOf, accessSignal } from '../src/wiring/replica-fanout.js';

// What replicas read back from each other (NOTIFY payloads, shared rows) is outside input: a
// malformed one is refused (null), never thrown on and never half-read.

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'then'];
const id = fc.string({ minLength: 1, maxLength: 60 });
const role = fc.constantFrom('owner', 'admin', 'member', 'guest') as fc.Arbitrary<'owner' | 'admin' | 'member' | 'guest'>;
const change: fc.Arbitrary<AccessChange> = fc.oneof(
  id.map((tokenId) => ({ type: 'token_revoked' as const, tokenId })),
  id.map((tokenId) => ({ type: 'token_expired' as const, tokenId })),
  id.map((principalId) => ({ type: 'principal_removed' as const, principalId })),
  fc.record({ principalId: id, from: role, to: role }).map((r) => ({ type: 'principal_demoted' as const, ...r })),
  id.map((sessionId) => ({ type: 'console_session_ended' as const, sessionId })),
);
const hostile = fc.oneof(
  fc.anything(),
  fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...PROTO_KEYS, 'change', 'tokenId', 'principalId', 'fromRole', 'toRole', 'sessionId')), fc.anything()),
  fc.record({ topic: fc.string(), change: fc.constantFrom('token_revoked', 'principal_demoted', 'nope'), tokenId: fc.anything(), fromRole: fc.anything() }),
  fc.constant(JSON.parse('{"__proto__":{"polluted":true},"change":"token_revoked","tokenId":"t"}')),
  fc.constantFrom(
    { change: 'token_revoked', tokenId: 'x'.repeat(10_000) },
    { change: 'principal_demoted', principalId: 'p', fromRole: 'root', toRole: 'owner' },
  ),
);

describe('access changes between replicas', () => {
  it('round-trips every access change through its signal', () => {
    fc.assert(
      fc.property(change, (c) => {
        expect(accessChangeOf(accessSignal(c))).toEqual(c);
      }),
    );
  });

  it('refuses hostile shapes without throwing, and never pollutes a prototype', () => {
    fc.assert(
      fc.property(hostile, (v) => {
        const r = accessChangeOf(v);
        if (r !== null) expect(['token_revoked', 'token_expired', 'principal_removed', 'principal_demoted', 'console_session_ended']).toContain(r.type);
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
      }),
    );
    expect(accessChangeOf({ change: 'token_revoked', tokenId: 'x'.repeat(10_000) })).toBeNull();
    expect(accessChangeOf({ change: 'principal_demoted', principalId: 'p', fromRole: 'root', toRole: 'owner' })).toBeNull();
  });
});

describe('console sessions read back from the shared table', () => {
  const row = (identity: string) => ({ hash: 'h', identity, tokenId: 't', csrfToken: 'c', expiresAt: 1 });

  it('reads back what was stored', () => {
    expect(fromRow(row(JSON.stringify({ kind: 'client', name: 'n', principalId: 'p', role: 'member' })))).toMatchObject({
      kind: 'client',
      principalId: 'p',
      role: 'member',
      hash: 'h',
    });
    expect(fromRow(row(JSON.stringify({ kind: 'operator', name: 'op', scopes: ['read', 'approvals'] })))).toMatchObject({
      kind: 'operator',
      scopes: ['read', 'approvals'],
    });
  });

  it('an identity that does not parse signs nobody in (null), whatever it holds', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.anything().map((v) => JSON.stringify(v) ?? 'undefined'),
          fc.constantFrom(
            '{"__proto__":{"kind":"operator"}}',
            '{"kind":"operator","name":"x","scopes":["root"]}',
            '{"kind":"client","name":"x","principalId":"p","role":"owner","extra":1}',
          ),
        ),
        (identity) => {
          const s = fromRow(row(identity));
          if (s !== null) expect(['operator', 'client']).toContain(s.kind);
        },
      ),
    );
    expect(fromRow(row('{"kind":"operator","name":"x","scopes":["root"]}'))).toBeNull();
    expect(fromRow(row('{"kind":"client","name":"x","principalId":"p","role":"owner","extra":1}'))).toBeNull();
  });
});
