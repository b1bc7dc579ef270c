/**
 * Folds Slack's duplicate deliveries before they reach the gateway: the app_mention + message pair
 * of one mention arrive together, and retries follow within minutes. The inbox dedupes durably;
 * this only spares the boundary gate (its rate limits and notices) from seeing one message twice.
 * A key counts as seen once its handler succeeded; a concurrent duplicate waits for the first.
 */
export class RecentKeys {
  private readonly seen = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly ttlMs = 15 * 60_000,
    private readonly max = 20_000,
  ) {}

  /** Runs `fn` unless `key` succeeded recently or is running now; true when `fn` ran. */
  async once(key: string, fn: () => Promise<void>): Promise<boolean> {
    const until = this.seen.get(key);
    if (until !== undefined && until > Date.now()) return false;
    const first = this.running.get(key);
    if (first) {
      const ok = await first.then(
        () => true,
        () => false,
      );
      if (ok) return false;
    }
    const p = fn();
    this.running.set(key, p);
    try {
      await p;
      this.seen.set(key, Date.now() + this.ttlMs);
      if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value!);
      return true;
    } finally {
      if (this.running.get(key) === p) this.running.delete(key);
    }
  }
}
