import type { Storage } from '@switchboard/core';
import type { Logger } from 'pino';

/** What `/readyz` and `doctor` say about the database. */
export interface DatabaseHealth {
  engine: Storage['engine'];
  state: 'up' | 'down';
  /** Why it is down: the driver's or server's words, scrubbed of secrets. */
  error?: string;
}

export interface StorageHealthOptions {
  /** `storage.healthInterval`: how often the database is pinged. */
  intervalMs: number;
  log: Logger;
  /** Removes configured secrets from an error text. */
  scrub(text: string): string;
  /**
   * Called when the database answers after an outage (or after a turn was cut off by one): resume
   * what the outage interrupted. A rejection keeps the resume pending for the next ping.
   */
  onRecovered(): Promise<unknown>;
}

/**
 * Tracks whether the database answers: pings it every `storage.healthInterval` (and at once when
 * something reports an outage), logs each transition once (`storage_down`, `storage_up`), and after
 * an outage runs {@link StorageHealthOptions.onRecovered} once the database answers again.
 */
export class StorageHealth {
  private current: DatabaseHealth;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | null = null;
  private recoverPending = false;
  private downSince = 0;
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: StorageHealthOptions,
  ) {
    this.current = { engine: storage.engine, state: 'up' };
  }

  /** The database's state as of the last ping. */
  snapshot(): DatabaseHealth {
    return { ...this.current };
  }

  /** Starts the periodic ping. */
  start(): void {
    this.schedule();
  }

  /** Stops pinging (shutdown); waits for a ping in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.checking;
  }

  /** Something failed for want of the database (a turn was cut off): check now, and resume once it answers. */
  outage(): void {
    this.recoverPending = true;
    void this.check();
  }

  /** Pings once now (shared with a ping already running). */
  check(): Promise<void> {
    this.checking ??= this.ping().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private async ping(): Promise<void> {
    let result: { ok: true } | { ok: false; error: string };
    try {
      result = await this.storage.ping();
    } catch (err) {
      result = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (this.stopped) return;
    const { log } = this.options;
    if (!result.ok) {
      const error = this.options.scrub(result.error);
      if (this.current.state === 'up') {
        this.downSince = Date.now();
        log.error({ event: 'storage_down', engine: this.current.engine, error }, 'the database is unreachable; requests that need it fail until it is back');
      }
      this.current = { engine: this.current.engine, state: 'down', error };
      this.recoverPending = true;
      return;
    }
    if (this.current.state === 'down') {
      log.info({ event: 'storage_up', engine: this.current.engine, downForMs: Date.now() - this.downSince }, 'the database answers again');
      this.current = { engine: this.current.engine, state: 'up' };
    }
    if (!this.recoverPending) return;
    this.recoverPending = false;
    try {
      const resumed = await this.options.onRecovered();
      log.info({ event: 'storage_recovered', resumedTurns: resumed }, 'turns interrupted by the database outage resumed');
    } catch (err) {
      this.recoverPending = true;
      log.warn({ err }, 'could not resume the turns interrupted by the database outage; trying again at the next ping');
    }
  }
}
