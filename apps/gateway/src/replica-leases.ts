import type { ExclusiveReceiver } from '@switchboard/core';
import type { Lease } from '@switchboard/store';
import type { Logger } from 'pino';

/** The lease operations (packages/store/src/pg/leases.ts), bound to the database. */
export interface LeaseOps {
  acquire(name: string, owner: string, ttlMs: number): Promise<Lease | null>;
  renew(lease: Lease, ttlMs: number): Promise<Lease | null>;
  release(lease: Lease): Promise<boolean>;
}

/** A receiver that runs under a lease: `receiver:<type>:<account>`. */
export interface LeasedReceiver {
  /** The channel id (`telegram:main`); the lease is `receiver:<id>`. */
  channelId: string;
  receiver: ExclusiveReceiver;
}

/** What {@link ReplicaLeases} works with. */
export interface ReplicaLeasesOptions {
  ops: LeaseOps;
  replicaId: string;
  /** `replicas.leaseTtl`: renewed at a third of it. */
  ttlMs: number;
  log: Logger;
  receivers: readonly LeasedReceiver[];
  /** Told after a lease was released (SIGTERM), so the other replicas can be woken to take it at once. */
  onReleased?(name: string): void;
}

interface Slot {
  name: string;
  receiver?: ExclusiveReceiver;
  lease: Lease | null;
  /** `performance.now()` when the last acquire or renewal that succeeded was sent. */
  confirmedAt: number;
}

/** The name of a receiver's lease. */
export const receiverLeaseName = (channelId: string): string => `receiver:${channelId}`;
/** The name of a replica's presence lease (held while it runs: `GET /api/v1/replicas`). */
export const presenceLeaseName = (replicaId: string): string => `replica:${replicaId}`;

/**
 * This replica's leases on PostgreSQL: its presence (`replica:<id>`) and one receiver lease per
 * account whose receiver runs on one replica at a time (Telegram polling, Slack Socket Mode). Every
 * third of the TTL it renews what it holds and tries to take what nobody holds; a receiver runs
 * exactly while its lease is held. A lease that could not be renewed is given up (its receiver
 * paused) once two thirds of the TTL passed since the last confirmed renewal, before another
 * replica may take it. `handOff` pauses the receivers and releases their leases (SIGTERM), so
 * another replica takes them at its next tick; `close` releases the presence last.
 */
export class ReplicaLeases {
  private readonly slots: Slot[];
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | null = null;
  /** A wake-up came while a tick ran: run another one right after it. */
  private again = false;
  private stopped = false;

  constructor(private readonly options: ReplicaLeasesOptions) {
    this.slots = [
      { name: presenceLeaseName(options.replicaId), lease: null, confirmedAt: 0 },
      ...options.receivers.map((r) => ({ name: receiverLeaseName(r.channelId), receiver: r.receiver, lease: null, confirmedAt: 0 })),
    ];
  }

  /** This replica's id (the owner of its leases). */
  get replicaId(): string {
    return this.options.replicaId;
  }

  /** The leases this replica holds now (as of its last renewal). */
  held(): Lease[] {
    return this.slots.flatMap((s) => (s.lease ? [s.lease] : []));
  }

  /** Takes what it can at once, then every third of the TTL. */
  async start(): Promise<void> {
    await this.tick();
    this.schedule();
  }

  /** Runs a tick now (another replica released a lease): a standby takes it without waiting for its next renewal. */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.run();
  }

  /** Pauses every receiver and releases its lease (graceful hand-off); the presence stays until {@link close}. */
  async handOff(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    for (const slot of this.slots) if (slot.receiver) await this.give(slot);
  }

  /** Hands off (if not yet) and releases the presence lease. */
  async close(): Promise<void> {
    await this.handOff();
    for (const slot of this.slots) await this.give(slot);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.run(), Math.max(1, Math.floor(this.options.ttlMs / 3)));
    this.timer.unref();
  }

  private run(): void {
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.run();
      } else this.schedule();
    });
  }

  private async tick(): Promise<void> {
    for (const slot of this.slots) {
      if (this.stopped) return;
      await this.keep(slot);
    }
  }

  /** Renews a held lease or tries to take a free one; a receiver follows its lease. */
  private async keep(slot: Slot): Promise<void> {
    const { ops, replicaId, ttlMs, log } = this.options;
    const sent = performance.now();
    try {
      if (slot.lease) {
        const renewed = await ops.renew(slot.lease, ttlMs);
        if (renewed) {
          slot.lease = renewed;
          slot.confirmedAt = sent;
          return;
        }
        log.warn(
          { event: 'lease_lost', lease: slot.name, fence: slot.lease.fence, replica: replicaId },
          `lease ${slot.name} was lost: another replica took it`,
        );
        await this.drop(slot);
        return;
      }
      const taken = await ops.acquire(slot.name, replicaId, ttlMs);
      if (!taken || this.stopped) {
        if (taken) await ops.release(taken).catch(() => undefined);
        return;
      }
      slot.lease = taken;
      slot.confirmedAt = sent;
      log.info({ event: 'lease_acquired', lease: slot.name, fence: taken.fence, replica: replicaId }, `lease ${slot.name} acquired`);
      slot.receiver?.resume();
    } catch (err) {
      if (!slot.lease) {
        log.warn({ event: 'lease_check_failed', lease: slot.name, error: errorText(err) }, `could not try to take lease ${slot.name}`);
        return;
      }
      // Unconfirmed for two thirds of the TTL: the lease may lapse before the next try, so stop as if it had.
      const late = performance.now() - slot.confirmedAt >= (2 * ttlMs) / 3;
      log.warn({ event: 'lease_renew_failed', lease: slot.name, error: errorText(err), givingUp: late }, `could not renew lease ${slot.name}`);
      if (late) await this.drop(slot);
    }
  }

  /** Stops the receiver and forgets the lease (lost or lapsing). */
  private async drop(slot: Slot): Promise<void> {
    slot.lease = null;
    await slot.receiver?.pause();
  }

  /** Stops the receiver, then lets the lease lapse now so another replica may take it. */
  private async give(slot: Slot): Promise<void> {
    await slot.receiver?.pause();
    const lease = slot.lease;
    slot.lease = null;
    if (!lease) return;
    const released = await this.options.ops.release(lease).catch((err: unknown) => {
      this.options.log.warn(
        { event: 'lease_release_failed', lease: lease.name, error: errorText(err) },
        `could not release lease ${lease.name}; it lapses at its expiry`,
      );
      return false;
    });
    if (!released) return;
    this.options.log.info({ event: 'lease_released', lease: lease.name, fence: lease.fence, replica: this.options.replicaId }, `lease ${lease.name} released`);
    this.options.onReleased?.(lease.name);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
