import type { Logger } from 'pino';
import type { Storage } from '../storage.js';

interface OpenWindow {
  target: string;
  identity: string;
  since: number;
  count: number;
  /** The count last written to the row. */
  written: number;
  id: Promise<number>;
}

/** Open windows kept in memory at most; past it, all are written out and forgotten. */
const MAX_OPEN = 10_000;

/**
 * Audits rate-limited messages as one `gate.rate_limited` row per sender per window (config
 * `audit.rateLimitWindow`), with a count: the row is written at the first limited message of a
 * window, and its count is brought up to date every window and when the gateway stops.
 */
export class RateLimitAudit {
  private readonly open = new Map<string, OpenWindow>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly window: number,
    private readonly log: Logger,
  ) {}

  /** Counts one rate-limited message of `identity` on channel account `target`. */
  async record(target: string, identity: string, now = Date.now()): Promise<void> {
    const key = `${target}|${identity}`;
    const entry = this.open.get(key);
    if (entry && now - entry.since < this.window) {
      entry.count++;
      return;
    }
    if (entry) await this.write(entry);
    if (this.open.size >= MAX_OPEN) await this.flush(true);
    const id = this.storage.audit.append({ actor: 'gateway', action: 'gate.rate_limited', target, detail: this.detail(identity, now, 1) });
    const next: OpenWindow = { target, identity, since: now, count: 1, written: 1, id };
    this.open.set(key, next);
    await id;
  }

  /** Writes the counts every window; windows that have closed are forgotten. */
  start(): void {
    this.timer = setInterval(() => void this.flush(false).catch((err: unknown) => this.log.error({ err }, 'rate-limit audit flush failed')), this.window);
    this.timer.unref();
  }

  /** Stops the timer and writes every count still in memory. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush(true).catch((err: unknown) => this.log.error({ err }, 'rate-limit audit flush failed'));
  }

  private async flush(all: boolean, now = Date.now()): Promise<void> {
    for (const [key, entry] of [...this.open]) {
      await this.write(entry);
      if (all || now - entry.since >= this.window) this.open.delete(key);
    }
  }

  private async write(entry: OpenWindow): Promise<void> {
    if (entry.count === entry.written) return;
    const count = entry.count;
    await this.storage.audit.updateDetail(await entry.id, this.detail(entry.identity, entry.since, count));
    entry.written = Math.max(entry.written, count);
  }

  private detail(identity: string, since: number, count: number) {
    return { identity, count, since: new Date(since).toISOString(), window: this.window };
  }
}
