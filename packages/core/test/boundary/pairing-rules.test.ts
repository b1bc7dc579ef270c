import type { InboundMessage, Principal, Role, Scope } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { approvalRefusal, combineHeld } from '../../src/boundary/pairing-rules.js';

const principal = (role: Role): Principal => ({ id: `p-${role}`, name: role, role, createdAt: new Date() });
const PAIRING: Scope[] = ['pairing'];
const ADMIN: Scope[] = ['admin'];

describe('approvalRefusal', () => {
  it('a pairing-only token creates principals at pairingRole or below, never above or owner', () => {
    expect(approvalRefusal({ scopes: PAIRING }, 'member', null)).toBeNull();
    expect(approvalRefusal({ role: 'guest', scopes: PAIRING }, 'member', null)).toBeNull();
    expect(approvalRefusal({ role: 'member', scopes: PAIRING }, 'member', null)).toBeNull();
    expect(approvalRefusal({ role: 'admin', scopes: PAIRING }, 'member', null)).toMatch(/pairingRole "member"/);
    expect(approvalRefusal({ role: 'owner', scopes: PAIRING }, 'admin', null)).toMatch(/owner/);
    // An account configured to pair people as owners still needs an admin to approve them.
    expect(approvalRefusal({ scopes: PAIRING }, 'owner', null)).toMatch(/owner/);
  });

  it('linking to an existing principal needs admin, and never an owner', () => {
    for (const role of ['guest', 'member', 'admin', 'owner'] as const) {
      expect(approvalRefusal({ principalId: `p-${role}`, scopes: PAIRING }, 'member', principal(role))).toMatch(/"principalId".*"admin"/);
    }
    expect(approvalRefusal({ principalId: 'p-member', scopes: ADMIN }, 'member', principal('member'))).toBeNull();
    expect(approvalRefusal({ principalId: 'p-admin', scopes: ADMIN }, 'member', principal('admin'))).toBeNull();
    expect(approvalRefusal({ principalId: 'p-owner', scopes: ADMIN }, 'member', principal('owner'))).toMatch(/owner/);
    // An unknown principal is the caller's 404, not a refusal here.
    expect(approvalRefusal({ principalId: 'nobody', scopes: ADMIN }, 'member', null)).toBeNull();
    expect(approvalRefusal({ principalId: 'nobody', scopes: PAIRING }, 'member', null)).toMatch(/"admin"/);
  });

  it('an admin may grant any role to a new principal', () => {
    for (const role of ['guest', 'member', 'admin', 'owner'] as const) expect(approvalRefusal({ role, scopes: ADMIN }, 'guest', null)).toBeNull();
  });
});

describe('combineHeld', () => {
  const m = (key: string, text: string): InboundMessage => ({
    dedupeKey: key,
    channel: 'webhook',
    account: 'main',
    conversation: { channel: 'webhook', account: 'main', id: 'dm-x', kind: 'dm' },
    sender: { identity: 'webhook:x', isBot: false },
    kind: 'dm',
    mentioned: true,
    text,
    platformId: `pid-${key}`,
    receivedAt: new Date(),
  });

  it('joins the texts in order under one dedupe key, addressed like the last message', () => {
    const one = combineHeld('ABCDEFGH', [m('a', 'first'), m('b', 'second'), m('c', 'third')]);
    expect(one).toMatchObject({ dedupeKey: 'pairing:ABCDEFGH', text: 'first\n\nsecond\n\nthird', platformId: 'pid-c' });
    expect(combineHeld('ABCDEFGH', [])).toBeNull();
  });
});
