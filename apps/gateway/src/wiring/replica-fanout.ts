import type { AccessChange, AccessEvents, ChannelFanout, ReplicaBus, ReplicaSignal, SharedMarks, Storage } from '@switchboard/core';
import {
  PgBus,
  PgFanoutHub,
  PgReplicaBus,
  type PostgresStorage,
  type SharedConsoleSessions,
  pgConsoleSessions,
  pgSharedMarks,
  pgSlotPool,
} from '@switchboard/store';
import { ReplicaSlots } from './replica-slots.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { Domain } from './domain.js';

// Replicas on one PostgreSQL database (issue 20) tell each other what changed here, by id:
// a decided approval (the turn waiting for it may run on another replica), changed rules (every
// replica caches them), an access change (sockets on every replica close), and the frames of a
// turn for a person's sockets on other replicas. A SQLite gateway opens none of this.

/** Topic: an approval was decided (or expired, or cancelled) here; `approvalId`. */
export const APPROVAL_SETTLED = 'approval_settled';
const RULES_CHANGED = 'rules_changed';
const ACCESS_CHANGED = 'access_changed';

/** The replication plumbing of a gateway on PostgreSQL. */
export interface ReplicaFanout {
  readonly replicaId: string;
  readonly bus: ReplicaBus;
  /** What channels get in their context (`fanout`, `marks`). */
  readonly channels: { fanout(channelId: string): ChannelFanout; marks: SharedMarks };
  /** The console's sessions, shared. */
  readonly consoleSessions: SharedConsoleSessions;
  /** Subagent slots: `subagents.perGateway` counted across replicas. */
  readonly subagentSlots: ReplicaSlots;
  /** Waits for what was published to be handed to the database, then stops listening. */
  close(): Promise<void>;
}

/**
 * Start-up step: the listening connection and the fan-out, when the storage is PostgreSQL;
 * undefined for SQLite (a single gateway: nobody to tell). Rejects when the listening connection
 * cannot be opened (the pool just connected, so the server is reachable).
 */
export async function openFanout(cfg: Readonly<Config>, storage: Storage, log: Logger, replicaId: string): Promise<ReplicaFanout | undefined> {
  if (storage.engine !== 'postgres') return undefined;
  const db = (storage as PostgresStorage).db;
  const busLog = log.child({ component: 'replicas', replicaId });
  const pgBus = new PgBus({
    url: cfg.storage.url,
    reconnectDelay: cfg.storage.fanout.reconnectDelay,
    onError: (err) =>
      busLog.warn(
        { event: 'bus_connection_lost', error: err instanceof Error ? err.message : String(err) },
        'replica bus: the listening connection failed; reconnecting',
      ),
  });
  pgBus.on('resync', () => busLog.info({ event: 'bus_resync' }, 'replica bus: listening again; re-reading what may have been missed'));
  await pgBus.start();
  const bus = new PgReplicaBus({ db, bus: pgBus, replicaId, log: busLog });
  const hub = new PgFanoutHub({ db, bus: pgBus, replicaId, retentionMs: cfg.storage.fanout.retention, log: busLog });
  await hub.start();
  busLog.info({ event: 'replica_bus', channel: pgBus.channel }, 'replica bus: listening');
  const slots = new ReplicaSlots({
    pool: pgSlotPool(db, { pool: 'subagents', limit: cfg.subagents.perGateway, owner: replicaId, ttlMs: cfg.replicas.leaseTtl }),
    poolName: 'subagents',
    bus,
    perGateway: cfg.subagents.perGateway,
    perTurn: cfg.subagents.perTurn,
    ttlMs: cfg.replicas.leaseTtl,
    log: busLog,
  });
  return {
    replicaId,
    bus,
    channels: { fanout: (id) => hub.forChannel(id), marks: pgSharedMarks(db) },
    consoleSessions: pgConsoleSessions(db),
    subagentSlots: slots,
    close: async () => {
      slots.close();
      await Promise.all([bus.flushed(), hub.flushed()]);
      await pgBus.close();
    },
  };
}

/** The broker's rules-changed hook: tells the other replicas to drop their cached rules. */
export function announceRulesChanged(bus: ReplicaBus): () => void {
  return () => bus.publish({ topic: RULES_CHANGED });
}

/**
 * Wires the domain to the other replicas: a decision announced elsewhere wakes the turn waiting
 * here, changed rules drop the cache, access changes are relayed both ways (a change announced
 * here is published; one received is emitted here, and not published again). After a gap every
 * approval a turn here waits for is re-read, and the rules are reloaded.
 */
export function followReplicas(replicas: ReplicaFanout, domain: Domain, access: AccessEvents, log: Logger): void {
  const { bus } = replicas;
  const wake = (approvalId: string) =>
    void domain.broker.refresh(approvalId).catch((err: unknown) => log.warn({ err, approvalId }, 'replica bus: re-reading a decided approval failed'));
  bus.on(APPROVAL_SETTLED, (s) => {
    if (typeof s.approvalId === 'string') wake(s.approvalId);
  });
  bus.on(RULES_CHANGED, () => domain.policy.dropCachedRules());
  bus.onResync(() => {
    domain.policy.dropCachedRules();
    void domain.broker.refreshWaiting().catch((err: unknown) => log.warn({ err }, 'replica bus: re-reading waiting approvals failed'));
  });
  let relaying = false;
  access.on((change) => {
    if (!relaying) bus.publish(accessSignal(change));
  });
  bus.on(ACCESS_CHANGED, (s) => {
    const change = accessChangeOf(s);
    if (!change) return log.warn({ signal: s.change }, 'replica bus: ignored a malformed access change');
    relaying = true;
    try {
      // Synchronous: every listener has acted (sockets cut) when emit returns.
      access.emit(change);
    } finally {
      relaying = false;
    }
  });
}

const role = z.enum(['owner', 'admin', 'member', 'guest']);
const id = z.string().min(1).max(200);
const accessSignalSchema = z.discriminatedUnion('change', [
  z.object({ change: z.literal('token_revoked'), tokenId: id }),
  z.object({ change: z.literal('token_expired'), tokenId: id }),
  z.object({ change: z.literal('principal_removed'), principalId: id }),
  z.object({ change: z.literal('principal_demoted'), principalId: id, fromRole: role, toRole: role }),
  z.object({ change: z.literal('console_session_ended'), sessionId: id }),
]);

/** An access change as a signal (`from` is the bus's own field: roles travel as `fromRole`/`toRole`). */
export function accessSignal(c: AccessChange): ReplicaSignal {
  switch (c.type) {
    case 'token_revoked':
    case 'token_expired':
      return { topic: ACCESS_CHANGED, change: c.type, tokenId: c.tokenId };
    case 'principal_removed':
      return { topic: ACCESS_CHANGED, change: c.type, principalId: c.principalId };
    case 'principal_demoted':
      return { topic: ACCESS_CHANGED, change: c.type, principalId: c.principalId, fromRole: c.from, toRole: c.to };
    case 'console_session_ended':
      return { topic: ACCESS_CHANGED, change: c.type, sessionId: c.sessionId };
  }
}

/** The access change a signal carries, or null when it is not a well-formed one. */
export function accessChangeOf(s: unknown): AccessChange | null {
  const r = accessSignalSchema.safeParse(s);
  if (!r.success) return null;
  const v = r.data;
  switch (v.change) {
    case 'token_revoked':
    case 'token_expired':
      return { type: v.change, tokenId: v.tokenId };
    case 'principal_removed':
      return { type: v.change, principalId: v.principalId };
    case 'principal_demoted':
      return { type: v.change, principalId: v.principalId, from: v.fromRole, to: v.toRole };
    case 'console_session_ended':
      return { type: v.change, sessionId: v.sessionId };
  }
}
