import type { NewApproval, NewPairingRequest, PairingLimits, PairingOutcome, Storage } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { inbound } from './contract/fixtures.js';

// What SQLite's single writer hides: on PostgreSQL the same calls run at once on separate
// connections. Each caller here is its own storage (its own pool), as replicas would be.
let server: PgServer;
const TEMPLATE = 'sb_concurrency_template';
const CALLERS = 10;
const ROUNDS = 5;

beforeAll(async () => {
  server = await startPostgres();
  const s = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
  await s.close();
});
afterAll(async () => server?.destroy());

/** `CALLERS` storages on one fresh database. */
async function replicas(): Promise<PostgresStorage[]> {
  const url = await server.createDatabase({ template: TEMPLATE });
  return Promise.all(Array.from({ length: CALLERS }, () => openPostgresStorage({ url, max: 1 })));
}

const closeAll = (stores: Storage[]) => Promise.all(stores.map((s) => s.close()));

/** An approval slot of turn `turnId`. */
const slot = (turnId: string): NewApproval => ({
  turnId,
  toolUseId: 'toolu_1',
  sessionId: 's1',
  tool: 'write_file',
  summary: 'write_file a.md',
  input: { path: 'a.md' },
  requesterPrincipalId: 'p1',
  conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
  expiresAt: new Date(Date.now() + 60_000),
  source: 'rule',
  alwaysRule: null,
});

let seq = 0;
const ask = (identity: string, key: string): NewPairingRequest => ({
  code: `C${String(++seq).padStart(7, '0')}`,
  channel: 'webhook',
  account: 'main',
  identity,
  displayName: null,
  conversation: { channel: 'webhook', account: 'main', id: `dm-${identity}`, kind: 'dm' },
  message: inbound(key, { channel: 'webhook', account: 'main', text: `hello ${key}`, sender: { identity, isBot: false } }),
  expiresAt: new Date(Date.now() + 3_600_000),
});

function kinds(outcomes: PairingOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  return counts;
}

describe('PostgreSQL governance under concurrency', () => {
  it(`${CALLERS} concurrent claims of one approval: exactly one wins, and the row shows the winner`, async () => {
    const stores = await replicas();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const { approval } = await stores[0]!.approvals.create(slot(`t${round}`));
        const won = await Promise.all(stores.map((s, i) => s.approvals.claim(approval.id, i % 2 ? 'allowed' : 'denied', `caller:${i}`)));
        expect(won.filter(Boolean)).toHaveLength(1);
        const winner = won.indexOf(true);
        expect(await stores[0]!.approvals.get(approval.id)).toMatchObject({ status: winner % 2 ? 'allowed' : 'denied', decidedBy: `caller:${winner}` });
      }
    } finally {
      await closeAll(stores);
    }
  });

  it(`${CALLERS} concurrent creates of one approval slot: one row, every caller gets it, one of them as new`, async () => {
    const stores = await replicas();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const created = await Promise.all(stores.map((s, i) => s.approvals.create({ ...slot(`c${round}`), summary: `caller ${i}` })));
        expect(created.filter((c) => !c.existed)).toHaveLength(1);
        expect(new Set(created.map((c) => c.approval.id)).size).toBe(1);
        expect(new Set(created.map((c) => c.approval.summary)).size).toBe(1);
        expect(await stores[0]!.approvals.list({ turnId: `c${round}` })).toHaveLength(1);
      }
    } finally {
      await closeAll(stores);
    }
  });

  it(`${CALLERS} concurrent first messages of one identity: one pending request holding every message within the limits`, async () => {
    const stores = await replicas();
    try {
      const roomy: PairingLimits = { maxPending: 2 * ROUNDS, maxHeld: 50, maxHeldBytes: 1 << 20, cooldown: 0 };
      const tight: PairingLimits = { ...roomy, maxHeld: 3 };
      for (let round = 0; round < ROUNDS; round++) {
        const a = `webhook:a${round}`;
        const outcomes = await Promise.all(stores.map((s, i) => s.pairing.requestOrHold(ask(a, `a${i}`), roomy)));
        expect(kinds(outcomes)).toEqual({ created: 1, held: CALLERS - 1 });
        const pending = (await stores[0]!.pairing.list({ status: 'pending' })).filter((p) => p.identity === a);
        expect(pending).toHaveLength(1);
        expect(pending[0]).toMatchObject({ heldCount: CALLERS });
        const held = await stores[0]!.pairing.held(pending[0]!.code);
        expect(held.map((m) => m.dedupeKey).sort()).toEqual(Array.from({ length: CALLERS }, (_, i) => `a${i}`).sort());

        // Tight limits: the held messages stop at maxHeld, and exactly one caller is the first to overflow.
        const b = `webhook:b${round}`;
        const more = await Promise.all(stores.map((s, i) => s.pairing.requestOrHold(ask(b, `b${i}`), tight)));
        expect(kinds(more)).toEqual({ created: 1, held: 2, overflow: CALLERS - 3 });
        expect(more.filter((o) => o.kind === 'overflow' && o.first)).toHaveLength(1);
        const ofB = (await stores[0]!.pairing.list({ status: 'pending' })).filter((p) => p.identity === b);
        expect(ofB).toHaveLength(1);
        expect(ofB[0]!.heldCount).toBe(3);
      }
    } finally {
      await closeAll(stores);
    }
  });

  it(`${CALLERS} concurrent new identities with maxPending 3: never more than 3 pending, each eviction a different request`, async () => {
    const stores = await replicas();
    try {
      const limits: PairingLimits = { maxPending: 3, maxHeld: 5, maxHeldBytes: 1 << 20, cooldown: 60_000 };
      for (let round = 0; round < ROUNDS; round++) {
        const outcomes = await Promise.all(stores.map((s, i) => s.pairing.requestOrHold(ask(`webhook:r${round}-${i}`, `m${i}`), limits)));
        expect(kinds(outcomes)).toEqual({ created: CALLERS });
        const pending = await stores[0]!.pairing.list({ status: 'pending' });
        expect(pending).toHaveLength(3);
        const evicted = outcomes.flatMap((o) => (o.kind === 'created' && o.evicted ? [o.evicted.code] : []));
        // Every request created before this round's last three was evicted by exactly one caller.
        const created = round === 0 ? CALLERS : CALLERS + 3;
        expect(new Set(evicted).size).toBe(evicted.length);
        expect(evicted).toHaveLength(created - 3);
        for (const code of evicted) expect(await stores[0]!.pairing.get(code)).toMatchObject({ status: 'expired', decidedBy: 'system', heldCount: 0 });
      }
    } finally {
      await closeAll(stores);
    }
  });
});
