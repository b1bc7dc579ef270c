/**
 * The circuit breaker of reactive compaction: at most `maxPerHour` reactive compactions per
 * session in any rolling hour (the per-turn limit of one is the shaper's own). Held in memory: a
 * restart forgets it, which only ever allows more attempts after a restart, never a loop within a
 * process. Bounded: sessions without an attempt in the last hour are forgotten.
 */
export class CompactionBreaker {
  private readonly attempts = new Map<string, number[]>();

  constructor(
    private readonly maxPerHour: number,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 3_600_000,
  ) {}

  // Attempts of the session still inside the window; sessions with none left are dropped.
  private recent(sessionId: string, at: number): number[] {
    const kept = (this.attempts.get(sessionId) ?? []).filter((t) => at - t < this.windowMs);
    if (kept.length > 0) this.attempts.set(sessionId, kept);
    else this.attempts.delete(sessionId);
    return kept;
  }

  /** Records a reactive compaction of `sessionId` when the breaker allows one now; false (nothing recorded) when it is open. */
  tryAcquire(sessionId: string): boolean {
    const at = this.now();
    const kept = this.recent(sessionId, at);
    if (kept.length >= this.maxPerHour) return false;
    kept.push(at);
    this.attempts.set(sessionId, kept);
    return true;
  }

  /** Reactive compactions of `sessionId` in the last hour. */
  count(sessionId: string): number {
    return this.recent(sessionId, this.now()).length;
  }

  /** Sessions held now (bounded by those with an attempt in the last hour). */
  get size(): number {
    return this.attempts.size;
  }
}
