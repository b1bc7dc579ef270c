import type { Storage } from '@switchboard/core';
import { acquireLease, type Lease, type LeaseRow, listLeases, PgBus, type PostgresStorage, publish, releaseLease, renewLease } from '@switchboard/store';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { resolveReplicaId } from '../config-replicas.js';
import { type LeasedReceiver, ReplicaLeases } from '../replica-leases.js';
import type { OpenedChannels } from './channels.js';

/** A lease as the control API and `/readyz` show it. */
export interface LeaseView {
  name: string;
  fence: number;
  expiresAt: string;
}

/** One replica in `GET /api/v1/replicas`. */
export interface ReplicaView {
  id: string;
  /** Whether this is the replica that answered. */
  self: boolean;
  /** When its presence lease was taken (its start). */
  since: string;
  /** What it holds: receivers (`receiver:<channel>`), sessions (`session:<id>`), … (not its presence). */
  holds: LeaseView[];
}

/** `GET /api/v1/replicas`. */
export interface ReplicasView {
  engine: Storage['engine'];
  self: string;
  replicas: ReplicaView[];
  /** Leases nobody holds now (lapsed or released), with their last holder. */
  free: Array<{ name: string; lastOwner: string; fence: number }>;
}

/** This process as a replica: its id, its leases (PostgreSQL only) and the view of all replicas. */
export interface ReplicaPlane {
  readonly id: string;
  /** `leased` on PostgreSQL: exclusive receivers run only under their lease. */
  readonly receiving: 'direct' | 'leased';
  /** The leases this replica holds now (none on SQLite). */
  held(): LeaseView[];
  /** Every replica and what it holds (on SQLite: this gateway alone). */
  view(): Promise<ReplicasView>;
  /** Takes this replica's presence and the receiver leases it can (PostgreSQL; after start-up). */
  start(channels: OpenedChannels): Promise<void>;
  /** SIGTERM: pauses the receivers and releases their leases, so another replica takes them now. */
  handOff(): Promise<void>;
  /** Releases the presence lease (last, before the database closes). */
  close(): Promise<void>;
}

/** The LISTEN channel on which a replica says it released a lease (payload: the lease name, never content). */
export const LEASE_CHANNEL = 'switchboard_leases';

const toView = (l: Lease): LeaseView => ({ name: l.name, fence: l.fence, expiresAt: new Date(l.expiresAt).toISOString() });

/** The replica plane for `storage.kind`: real leases on PostgreSQL, a gateway alone on SQLite. */
export function buildReplicas(cfg: Readonly<Config>, storage: Storage, log: Logger): ReplicaPlane {
  const id = resolveReplicaId(cfg.gateway.replicaId);
  const startedAt = new Date();
  if (storage.engine !== 'postgres') {
    return {
      id,
      receiving: 'direct',
      held: () => [],
      view: async () => ({ engine: storage.engine, self: id, replicas: [{ id, self: true, since: startedAt.toISOString(), holds: [] }], free: [] }),
      start: async () => undefined,
      handOff: async () => undefined,
      close: async () => undefined,
    };
  }
  const db = (storage as PostgresStorage).db;
  const rlog = log.child({ component: 'replicas' });
  let leases: ReplicaLeases | null = null;
  // Wake-ups only: a standby that misses one takes the lease at its next renewal anyway.
  const bus = new PgBus({
    url: cfg.storage.url,
    channel: LEASE_CHANNEL,
    onError: (err) =>
      rlog.warn({ event: 'lease_wakeups_down', error: err instanceof Error ? err.message : String(err) }, 'lease wake-ups lost their connection; reconnecting'),
  });
  bus.on('event', (e: { topic: string; from: string }) => {
    if (e.topic === 'lease_released' && e.from !== id) leases?.nudge();
  });
  bus.on('resync', () => leases?.nudge());
  return {
    id,
    receiving: 'leased',
    held: () => (leases?.held() ?? []).map(toView),
    view: async () => viewOf(await listLeases(db), id),
    start: async (channels) => {
      const receivers: LeasedReceiver[] = channels.list.flatMap((c) => {
        const receiver = c.exclusiveReceiver?.() ?? null;
        return receiver ? [{ channelId: c.id, receiver }] : [];
      });
      leases = new ReplicaLeases({
        ops: {
          acquire: (name, owner, ttl) => acquireLease(db, name, owner, ttl),
          renew: (lease, ttl) => renewLease(db, lease, ttl),
          release: (lease) => releaseLease(db, lease),
        },
        replicaId: id,
        ttlMs: cfg.replicas.leaseTtl,
        log: rlog,
        receivers,
        onReleased: (name) => {
          publish(db, LEASE_CHANNEL, { topic: 'lease_released', from: id, name }).catch((err: unknown) =>
            rlog.warn(
              { event: 'lease_wakeup_failed', lease: name, error: err instanceof Error ? err.message : String(err) },
              'could not wake the other replicas',
            ),
          );
        },
      });
      await bus
        .start()
        .catch((err: unknown) =>
          rlog.warn(
            { event: 'lease_wakeups_down', error: err instanceof Error ? err.message : String(err) },
            'lease wake-ups are off: standbys take released leases at their next renewal',
          ),
        );
      await leases.start();
    },
    handOff: async () => leases?.handOff(),
    close: async () => {
      await leases?.close();
      await bus.close();
    },
  };
}

/** Groups the lease rows by holder: a replica is a live `replica:<id>` lease. */
export function viewOf(rows: readonly LeaseRow[], self: string): ReplicasView {
  const live = rows.filter((r) => r.expiresAt > r.now);
  const replicas: ReplicaView[] = live
    .filter((r) => r.name.startsWith('replica:'))
    .map((r) => ({
      id: r.owner,
      self: r.owner === self,
      since: new Date(r.acquiredAt).toISOString(),
      holds: live.filter((l) => l.owner === r.owner && !l.name.startsWith('replica:')).map(toView),
    }));
  // Receivers nobody holds (a lapsed `session:` lease is just an idle session: one per session ever run, never listed).
  const free = rows.filter((r) => r.expiresAt <= r.now && r.name.startsWith('receiver:')).map((r) => ({ name: r.name, lastOwner: r.owner, fence: r.fence }));
  return { engine: 'postgres', self, replicas, free };
}
