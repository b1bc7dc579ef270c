import type { ChannelHealth } from '@switchboard/core';
import type { Api } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from 'pino';
import { apiErrorCode, describeError, retryAfter } from './errors.js';
import type { OffsetStore } from './offset-store.js';
import { ALLOWED_UPDATES } from './options.js';

/** What the poller needs. */
export interface PollerOptions {
  api: Api;
  token: string;
  log: Logger;
  store: OffsetStore;
  pollTimeoutMs: number;
  pollStallTimeoutMs: number;
  /**
   * Durably handles one update. Contract: resolve once it is accepted (inbox) or consciously
   * dropped; reject to have it retried (the offset does not move past it).
   */
  handle(update: Update): Promise<void>;
}

const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

class WatchdogAbort extends Error {}

/**
 * The long-poll loop of one bot. Every update is handed to `handle` before the offset moves past
 * it, and the offset is persisted, so a crash re-delivers rather than loses. A watchdog counts
 * only completed getUpdates calls: a call still open after `pollStallTimeoutMs` is aborted and a
 * new one started. 409/401/5xx/network failures back off (bounded), never a tight loop.
 */
export class Poller {
  private offset: number | undefined;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private current: AbortController | null = null;
  private wake: (() => void) | null = null;
  private pollStartedAt: number | null = null;
  private lastCompletedAt: number | null = null;
  private stalledSince: number | null = null;
  private conflict: string | null = null;
  private failure: string | null = null;
  private inboxFailure: string | null = null;
  private readonly overdueMs: number;

  constructor(private readonly o: PollerOptions) {
    this.offset = o.store.load();
    // Between a normal long poll's end and the watchdog's abort, the poll counts as overdue (down).
    this.overdueMs = o.pollTimeoutMs + Math.max(200, (o.pollStallTimeoutMs - o.pollTimeoutMs) / 2);
  }

  /** Starts the loop (once). `before` runs first, e.g. getMe and deleteWebhook. */
  start(before: () => Promise<void>): void {
    this.loop ??= this.run(before).catch((err: unknown) => this.o.log.error({ error: describeError(err, this.o.token) }, 'telegram poller crashed'));
  }

  /** Aborts the open poll and waits for the loop to end; idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    this.wake?.();
    await this.loop;
  }

  /** Polling health for /readyz. */
  health(): ChannelHealth {
    const now = Date.now();
    const secs = (ms: number) => `${Math.round(ms / 100) / 10}s`;
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    if (this.conflict) return { state: 'down', detail: `polling conflict (409 ${this.conflict}): another poller or a webhook is active for this bot; retrying with backoff` };
    if (this.stalledSince !== null) {
      return { state: 'down', detail: `polling stalled: no getUpdates call completed for ${secs(now - this.stalledSince)}; the stalled poll was aborted and a new one started` };
    }
    if (this.pollStartedAt !== null && now - this.pollStartedAt > this.overdueMs) {
      return { state: 'down', detail: `polling stalled: the open getUpdates call is ${secs(now - this.pollStartedAt)} old (long-poll timeout ${secs(this.o.pollTimeoutMs)})` };
    }
    if (this.lastCompletedAt === null) return { state: 'down', detail: this.failure ? `polling not started: ${this.failure}` : 'polling starting' };
    if (this.failure) return { state: 'degraded', detail: `polling failing: ${this.failure}; retrying with backoff` };
    if (this.inboxFailure) return { state: 'degraded', detail: `could not store an update: ${this.inboxFailure}; retrying` };
    return { state: 'up', detail: `polling; last getUpdates completed ${secs(now - this.lastCompletedAt)} ago` };
  }

  private async run(before: () => Promise<void>): Promise<void> {
    let failures = 0;
    for (;;) {
      if (this.stopped) return;
      try {
        await before();
        break;
      } catch (err) {
        this.failure = describeError(err, this.o.token);
        this.o.log.warn({ error: this.failure }, 'telegram: could not initialise the bot; retrying');
        await this.sleep(backoff(++failures));
      }
    }
    this.failure = null;
    failures = 0;
    // The first call (and the first after a failure) is a short poll: it proves the link at once.
    let short = true;
    while (!this.stopped) {
      const ac = new AbortController();
      this.current = ac;
      this.pollStartedAt = Date.now();
      const watchdog = setTimeout(() => {
        this.stalledSince ??= this.pollStartedAt;
        this.o.log.warn({ event: 'telegram_poll_stalled', stallTimeoutMs: this.o.pollStallTimeoutMs }, 'telegram: getUpdates stalled; aborting it and polling again');
        ac.abort(new WatchdogAbort('stalled'));
      }, this.o.pollStallTimeoutMs);
      let updates: Update[];
      try {
        updates = await this.o.api.getUpdates(
          { ...(this.offset !== undefined ? { offset: this.offset } : {}), limit: 100, timeout: short ? 0 : Math.max(1, Math.round(this.o.pollTimeoutMs / 1000)), allowed_updates: [...ALLOWED_UPDATES] },
          // grammY types its signal with the abort-controller shim; a native one works at run time.
          ac.signal as unknown as Parameters<Api['getUpdates']>[1],
        );
      } catch (err) {
        clearTimeout(watchdog);
        this.pollStartedAt = null;
        if (this.stopped) return;
        if (ac.signal.aborted) {
          short = true;
          continue;
        }
        short = true;
        await this.onPollError(err, ++failures);
        continue;
      } finally {
        this.current = null;
      }
      clearTimeout(watchdog);
      this.pollStartedAt = null;
      if (this.stalledSince !== null || this.conflict || this.failure) this.o.log.info({ event: 'telegram_poll_recovered' }, 'telegram: polling recovered');
      this.lastCompletedAt = Date.now();
      this.stalledSince = null;
      this.conflict = null;
      this.failure = null;
      failures = 0;
      short = false;
      for (const u of updates) {
        if (!(await this.deliver(u))) return;
      }
    }
  }

  private async onPollError(err: unknown, failures: number): Promise<void> {
    const code = apiErrorCode(err);
    const what = describeError(err, this.o.token);
    let delay = backoff(failures);
    if (code === 409) {
      this.conflict = what.replace(/^409: /, '');
      this.o.log.error({ event: 'telegram_poll_conflict', error: what, retryInMs: delay }, 'telegram: getUpdates conflict (another poller or a webhook is active)');
      return this.sleep(delay);
    }
    const after = retryAfter(err);
    if (after !== undefined) delay = Math.min(after * 1000, 5 * 60_000);
    this.failure = what;
    this.o.log.warn({ event: 'telegram_poll_failed', error: what, retryInMs: delay }, 'telegram: getUpdates failed; backing off');
    return this.sleep(delay);
  }

  /** Hands one update over until it is handled (or the poller stops); then moves the offset. */
  private async deliver(u: Update): Promise<boolean> {
    let failures = 0;
    for (;;) {
      if (this.stopped) return false;
      try {
        await this.o.handle(u);
        this.inboxFailure = null;
        break;
      } catch (err) {
        this.inboxFailure = describeError(err, this.o.token);
        this.o.log.error({ error: this.inboxFailure, updateId: u.update_id }, 'telegram: could not store an update; retrying');
        await this.sleep(backoff(++failures));
      }
    }
    this.offset = u.update_id + 1;
    try {
      this.o.store.save(this.offset);
    } catch (err) {
      this.o.log.error({ error: describeError(err, this.o.token) }, 'telegram: could not persist the update offset');
    }
    return true;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }
}

function backoff(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, failures - 1));
}
