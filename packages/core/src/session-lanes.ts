import { isSwbError, SwbErrorCode } from './errors.js';
import type { Logger } from 'pino';
import type { Fence, SessionLeaseStore } from './storage.js';
import type { TranscriptCache } from './transcript-cache.js';

/** How session lanes span replicas (`storage.kind: "postgres"`); see docs/adr/0010-replica-session-leases.md. */
export interface ReplicaLaneSettings {
  /** This replica's id: the owner of its leases. */
  owner: string;
  /** How long a session lease lasts unless renewed; it is renewed at a third of this while the session has work here. */
  leaseTtlMs: number;
  /** How often this replica looks for sessions whose work nobody holds (a replica died or left). */
  orphanScanMs: number;
}

interface Held {
  lease: Fence;
  timer: NodeJS.Timeout;
  renewing: boolean;
  lost(): void;
}

/** Fence numbers remembered per session at most (the oldest go first: their next take reloads the transcript). */
const REMEMBERED = 10_000;

/**
 * The replica side of session lanes: the lease `session:<id>` is taken before a session's turns
 * run here, renewed at a third of its TTL while they run, and released when the lane has no more
 * work. The transcript cache keeps a session's entries only while the lease stays with this
 * replica: a take whose fence is not the next after the one this replica last held means another
 * replica wrote in between, so the cached transcript is dropped.
 */
export class SessionLanes {
  private readonly held = new Map<string, Held>();
  /** The fence this replica last held per session. */
  private readonly lastFence = new Map<string, number>();
  private scan: NodeJS.Timeout | null = null;
  private scanning = false;
  /** Sessions this replica has work for whose lease another replica held: tried again at the next scan. */
  private readonly deferred = new Set<string>();

  constructor(
    private readonly store: SessionLeaseStore,
    private readonly settings: ReplicaLaneSettings,
    private readonly transcripts: TranscriptCache,
    private readonly log: Logger,
  ) {}

  /** The fence of the session's lease while this replica holds it. */
  fence(sessionId: string): Fence | undefined {
    return this.held.get(sessionId)?.lease;
  }

  /**
   * Takes the session's lease (null while another replica holds it) and keeps renewing it;
   * `lost` is called once if a renewal finds it taken or lapsed.
   */
  async hold(sessionId: string, lost: () => void): Promise<Fence | null> {
    const existing = this.held.get(sessionId);
    if (existing) return existing.lease;
    const lease = await this.store.acquire(sessionId, this.settings.owner, this.settings.leaseTtlMs);
    if (!lease) {
      // The holder runs what is queued once it is done; if it died instead, this replica takes over at expiry.
      this.deferred.add(sessionId);
      return null;
    }
    this.deferred.delete(sessionId);
    const last = this.lastFence.get(sessionId);
    // Every change of hands bumps the fence, and so does this replica's own take after its release.
    if (last === undefined || (lease.fence !== last && lease.fence !== last + 1)) this.transcripts.drop(sessionId);
    this.remember(sessionId, lease.fence);
    const held: Held = {
      lease,
      renewing: false,
      lost,
      timer: setInterval(() => void this.renew(sessionId, held), Math.max(1, Math.floor(this.settings.leaseTtlMs / 3))),
    };
    held.timer.unref();
    this.held.set(sessionId, held);
    this.log.debug({ sessionId, fence: lease.fence }, 'session lease taken');
    return lease;
  }

  /** Lets the session's lease lapse now, so another replica may take the session at once. */
  async release(sessionId: string): Promise<void> {
    const held = this.held.get(sessionId);
    if (!held) return;
    clearInterval(held.timer);
    this.held.delete(sessionId);
    await this.store
      .release(held.lease)
      .catch((err: unknown) => this.log.warn({ err, sessionId }, 'could not release a session lease; it lapses at its expiry'));
  }

  /**
   * Looks for orphaned sessions every `orphanScanMs` (and once now) and hands each one this
   * replica does not run already to `kick`, whose lane takes the lease (or finds it taken) — with
   * the sessions whose lease this replica last found held by another.
   */
  start(kick: (sessionId: string) => void, busy: (sessionId: string) => boolean): void {
    if (this.scan) return;
    const run = async () => {
      if (this.scanning) return;
      this.scanning = true;
      try {
        const again = [...this.deferred];
        this.deferred.clear();
        for (const sessionId of new Set([...again, ...(await this.store.orphans(this.settings.leaseTtlMs, this.settings.owner))]))
          if (!busy(sessionId)) kick(sessionId);
      } catch (err) {
        this.log.warn({ err }, 'orphaned-session scan failed; retrying at the next interval');
      } finally {
        this.scanning = false;
      }
    };
    this.scan = setInterval(() => void run(), this.settings.orphanScanMs);
    this.scan.unref();
    void run();
  }

  /** Stops the scan and releases every lease still held (shutdown, after the lanes settled). */
  async stop(): Promise<void> {
    if (this.scan) clearInterval(this.scan);
    this.scan = null;
    await Promise.all([...this.held.keys()].map((id) => this.release(id)));
  }

  /** Sessions whose lease this replica holds now. */
  heldSessions(): string[] {
    return [...this.held.keys()];
  }

  private async renew(sessionId: string, held: Held): Promise<void> {
    if (held.renewing || this.held.get(sessionId) !== held) return;
    held.renewing = true;
    try {
      const next = await this.store.renew(held.lease, this.settings.leaseTtlMs);
      if (this.held.get(sessionId) !== held) return;
      if (next) {
        held.lease = next;
        return;
      }
      clearInterval(held.timer);
      this.held.delete(sessionId);
      this.log.warn({ sessionId, fence: held.lease.fence }, 'session lease lost: another replica may take the session');
      held.lost();
    } catch (err) {
      // A failed round trip is not a lost lease: the next renewal tries again before it lapses.
      this.log.warn({ err, sessionId }, 'session lease renewal failed');
    } finally {
      held.renewing = false;
    }
  }

  private remember(sessionId: string, fence: number): void {
    this.lastFence.delete(sessionId);
    this.lastFence.set(sessionId, fence);
    if (this.lastFence.size > REMEMBERED) {
      const oldest = this.lastFence.keys().next().value;
      if (oldest !== undefined) this.lastFence.delete(oldest);
    }
  }
}

/** Whether a thrown value is a fenced write refused because this replica's session lease is gone. */
export function isLeaseLost(err: unknown): boolean {
  return isSwbError(err, SwbErrorCode.LeaseLost);
}
