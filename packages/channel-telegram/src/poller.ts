import { countsAsAttempt, type ChannelHealth } from '@switchboard/core';
import type { Api } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from 'pino';
import { apiErrorCode, describeError, isPermanentAuthError, networkCause, retryAfter } from './errors.js';
import type { OffsetStore } from './offset-store.js';
import { ALLOWED_UPDATES } from './options.js';
import { backoffDelay } from './retry-policy.js';

/** What the poller needs. */
export interface PollerOptions {
  api: Api;
  token: string;
  log: Logger;
  pollTimeoutMs: number;
  pollStallTimeoutMs: number;
  /** The Bot API host, named in failure logs. */
  host: string;
  /** Backoff after a failed poll or set-up call: doubles from `baseMs` up to `maxMs`. */
  backoff: { baseMs: number; maxMs: number };
  /** How long to wait before trying a refused token (401) again. */
  authRetryMs: number;
  /** The `down` detail for a refused token, from the error's description. */
  authProblem(what: string): string;
  /**
   * Durably handles one update. Contract: resolve once it is accepted (inbox) or consciously
   * dropped; reject to have it retried (the offset does not move past it until the attempts run out).
   */
  handle(update: Update): Promise<void>;
  /** Attempts per update before it is dead-lettered (`limits.inboxMaxAttempts`). */
  maxAttempts(): number;
  /** Gives up on an update: record it as a dead letter and apologise to its sender. Must not throw. */
  deadLetter(update: Update, error: string, attempts: number): Promise<void>;
}

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
  private authDown: string | null = null;
  private deadLettered = 0;
  private readonly overdueMs: number;

  constructor(private readonly options: PollerOptions) {
    // Between a normal long poll's end and the watchdog's abort, the poll counts as overdue (down).
    this.overdueMs = options.pollTimeoutMs + Math.max(200, (options.pollStallTimeoutMs - options.pollTimeoutMs) / 2);
  }

  /**
   * Starts the loop (once). `before` runs first, e.g. getMe and deleteWebhook; then the stored
   * offset is loaded from `store` (both retried with backoff until they succeed).
   */
  start(store: OffsetStore, before: () => Promise<void>): void {
    this.loop ??= this.run(store, async () => {
      await before();
      this.offset = await store.load();
    }).catch((err: unknown) => this.options.log.error({ error: describeError(err, this.options.token) }, 'telegram poller crashed'));
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
    if (this.authDown) return { state: 'down', detail: this.authDown };
    if (this.conflict)
      return { state: 'down', detail: `polling conflict (409 ${this.conflict}): another poller or a webhook is active for this bot; retrying with backoff` };
    if (this.stalledSince !== null) {
      return {
        state: 'down',
        detail: `polling stalled: no getUpdates call completed for ${secs(now - this.stalledSince)}; the stalled poll was aborted and a new one started`,
      };
    }
    if (this.pollStartedAt !== null && now - this.pollStartedAt > this.overdueMs) {
      return {
        state: 'down',
        detail: `polling stalled: the open getUpdates call is ${secs(now - this.pollStartedAt)} old (long-poll timeout ${secs(this.options.pollTimeoutMs)})`,
      };
    }
    if (this.lastCompletedAt === null)
      return { state: 'down', detail: this.failure ? `starting: polling not started: ${this.failure}; retrying with backoff` : 'polling starting' };
    if (this.failure) return { state: 'degraded', detail: `polling failing: ${this.failure}; retrying with backoff` };
    if (this.inboxFailure) return { state: 'degraded', detail: `could not store an update: ${this.inboxFailure}; retrying` };
    const dead = this.deadLettered > 0 ? `; ${this.deadLettered} update(s) dead-lettered since start` : '';
    return { state: 'up', detail: `polling; last getUpdates completed ${secs(now - this.lastCompletedAt)} ago${dead}` };
  }

  private async run(store: OffsetStore, before: () => Promise<void>): Promise<void> {
    let failures = 0;
    for (;;) {
      if (this.stopped) return;
      try {
        await before();
        break;
      } catch (err) {
        if (this.stopped) return;
        const what = describeError(err, this.options.token);
        if (isPermanentAuthError(err)) {
          this.authDown = this.options.authProblem(what);
          this.options.log.error({ event: 'telegram_token_refused', host: this.options.host, error: what, retryInMs: this.options.authRetryMs }, this.authDown);
          await this.sleep(this.options.authRetryMs);
          continue;
        }
        this.authDown = null;
        this.failure = what;
        const delay = this.backoff(++failures);
        const net = networkCause(err);
        this.options.log.warn(
          { event: 'telegram_init_failed', host: this.options.host, cause: net?.cause ?? 'api error', error: what, retryInMs: delay },
          `telegram: could not initialise the bot (${net ? `${net.cause} ${this.options.host}` : what}); retrying in ${delay} ms`,
        );
        await this.sleep(delay);
      }
    }
    this.authDown = null;
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
        this.options.log.warn(
          { event: 'telegram_poll_stalled', stallTimeoutMs: this.options.pollStallTimeoutMs },
          'telegram: getUpdates stalled; aborting it and polling again',
        );
        ac.abort(new WatchdogAbort('stalled'));
      }, this.options.pollStallTimeoutMs);
      let updates: Update[];
      try {
        updates = await this.options.api.getUpdates(
          {
            ...(this.offset !== undefined ? { offset: this.offset } : {}),
            limit: 100,
            timeout: short ? 0 : Math.max(1, Math.round(this.options.pollTimeoutMs / 1000)),
            allowed_updates: [...ALLOWED_UPDATES],
          },
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
      if (this.stalledSince !== null || this.conflict || this.failure)
        this.options.log.info({ event: 'telegram_poll_recovered' }, 'telegram: polling recovered');
      this.lastCompletedAt = Date.now();
      this.authDown = null;
      this.stalledSince = null;
      this.conflict = null;
      this.failure = null;
      failures = 0;
      short = false;
      for (const u of updates) {
        if (!(await this.deliver(u, store))) return;
      }
    }
  }

  private async onPollError(err: unknown, failures: number): Promise<void> {
    const code = apiErrorCode(err);
    const what = describeError(err, this.options.token);
    if (isPermanentAuthError(err)) {
      this.authDown = this.options.authProblem(what);
      this.options.log.error({ event: 'telegram_token_refused', host: this.options.host, error: what, retryInMs: this.options.authRetryMs }, this.authDown);
      return this.sleep(this.options.authRetryMs);
    }
    let delay = this.backoff(failures);
    if (code === 409) {
      this.conflict = what.replace(/^409: /, '');
      this.options.log.error(
        { event: 'telegram_poll_conflict', error: what, retryInMs: delay },
        'telegram: getUpdates conflict (another poller or a webhook is active)',
      );
      return this.sleep(delay);
    }
    const after = retryAfter(err);
    if (after !== undefined) delay = Math.min(after * 1000, 5 * 60_000);
    this.failure = what;
    const net = networkCause(err);
    this.options.log.warn(
      { event: 'telegram_poll_failed', host: this.options.host, cause: net?.cause ?? `HTTP ${code ?? '?'}`, error: what, retryInMs: delay },
      `telegram: getUpdates failed (${net ? `${net.cause} ${this.options.host}` : what}); retrying in ${delay} ms`,
    );
    return this.sleep(delay);
  }

  /**
   * Hands one update over until it is handled, its attempts run out (dead letter) or the poller
   * stops; then moves the offset.
   */
  private async deliver(u: Update, store: OffsetStore): Promise<boolean> {
    const max = Math.max(1, this.options.maxAttempts());
    let deferred = false;
    for (let attempt = 1; ; attempt++) {
      if (this.stopped) return false;
      try {
        await this.options.handle(u);
        this.inboxFailure = null;
        break;
      } catch (err) {
        const what = describeError(err, this.options.token);
        if (!countsAsAttempt(err)) {
          // The gateway is shutting down or its database is away: the update stays unconfirmed (the offset does not move).
          if (!deferred)
            this.options.log.info(
              { event: 'telegram_update_deferred', updateId: u.update_id },
              'telegram: the gateway cannot store the update now (shutting down, or its database is unreachable); it is kept and tried again',
            );
          deferred = true;
          attempt = 0;
          await this.sleep(this.options.backoff.baseMs);
          continue;
        }
        if (attempt >= max) {
          this.inboxFailure = null;
          this.deadLettered++;
          await this.options.deadLetter(u, what, attempt);
          break;
        }
        this.inboxFailure = what;
        const delay = this.backoff(attempt);
        this.options.log.error(
          { event: 'telegram_store_failed', error: what, updateId: u.update_id, attempt, maxAttempts: max, retryInMs: delay },
          `telegram: could not store an update (attempt ${attempt} of ${max}); retrying`,
        );
        await this.sleep(delay);
      }
    }
    this.offset = u.update_id + 1;
    try {
      // Awaited: the next getUpdates (which confirms the update to Telegram) starts only after the save.
      await store.save(this.offset);
    } catch (err) {
      this.options.log.error({ error: describeError(err, this.options.token) }, 'telegram: could not persist the update offset');
    }
    return true;
  }

  private backoff(failures: number): number {
    return backoffDelay(failures, this.options.backoff.baseMs, this.options.backoff.maxMs);
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
