/** Most signed requests one route remembers at once (per account); see {@link ReplayMemory}. */
export const REPLAY_MEMORY_MAX = 10_000;

interface Entry<T> {
  value: T;
  /** When the request's timestamp leaves the replay window: after that it is refused anyway. */
  expiresAt: number;
}

/**
 * The signed requests a route has taken within the replay window, keyed by their verified MAC
 * (one per distinct timestamp, method, path and body). In memory and bounded: an entry is
 * dropped once its timestamp is outside the window (the timestamp check refuses the request
 * from then on), and when more than `max` entries are held the oldest are dropped first. Losing an entry —
 * to that bound or to a restart — never lets a replay act twice: the signature binds a decision
 * to one approval id, which is decided once, and a message to its id, which the inbox dedupes;
 * the memory only makes the answer to a replay exact (the original result, or `replayed`).
 */
export class ReplayMemory<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly max: number = REPLAY_MEMORY_MAX) {}

  /** The value remembered for `mac`, if its window has not passed. */
  get(mac: string, nowMs: number = Date.now()): T | undefined {
    const e = this.entries.get(mac);
    if (!e) return undefined;
    if (e.expiresAt < nowMs) {
      this.entries.delete(mac);
      return undefined;
    }
    return e.value;
  }

  /** Remembers `value` for `mac` until `expiresAt` (epoch ms). */
  set(mac: string, value: T, expiresAt: number, nowMs: number = Date.now()): void {
    this.entries.delete(mac);
    this.entries.set(mac, { value, expiresAt });
    this.prune(nowMs);
  }

  /** Forgets `mac`, if it still holds `value` (a failed first attempt, so an honest retry runs again). */
  forget(mac: string, value: T): void {
    if (this.entries.get(mac)?.value === value) this.entries.delete(mac);
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(nowMs: number): void {
    // Entries arrive roughly in expiry order, so expired ones collect at the front.
    for (const [mac, e] of this.entries) {
      if (e.expiresAt >= nowMs) break;
      this.entries.delete(mac);
    }
    if (this.entries.size <= this.max) return;
    for (const [mac, e] of this.entries) if (e.expiresAt < nowMs) this.entries.delete(mac);
    // Still full: drop the oldest tenth at once, so the scan above runs once per tenth, not per request.
    const keep = Math.floor(this.max * 0.9);
    for (const mac of this.entries.keys()) {
      if (this.entries.size <= keep) break;
      this.entries.delete(mac);
    }
  }
}
