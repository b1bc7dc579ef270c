import { describeThrown } from '@switchboard/core';
import type { Logger } from 'pino';

/** Exit code after an exception that escaped every fault boundary (EX_SOFTWARE). */
export const EXIT_UNCAUGHT = 70;

/** What {@link installProcessGuard} returns. */
export interface ProcessGuard {
  /** Sets the graceful shutdown (drain, suspend, close) an escaped exception runs; until then it exits at once. */
  onFatal(shutdown: () => Promise<void>, graceMs: number): void;
}

/**
 * Process-level last resort, installed once at `start`:
 * - `unhandledRejection`: a promise no boundary caught. Logged with its reason and a count, and
 *   the process keeps running (a rejection leaves no half-done synchronous state; Node's default
 *   would end every channel and turn with it).
 * - `uncaughtException`: an exception that escaped every boundary, so the process state is not
 *   to be trusted. Logged, then the gateway shuts down gracefully — stop accepting, drain turns for
 *   `limits.shutdownGrace`, suspend the rest, close the database — and exits 70; if that does not
 *   finish within the grace plus 5 s, it exits 70 anyway. A second one during that is only logged.
 */
export function installProcessGuard(log: Logger): ProcessGuard {
  let shutdown: (() => Promise<void>) | null = null;
  let graceMs = 10_000;
  let rejections = 0;
  let fatal = false;
  const safeLog = (level: 'error' | 'fatal', obj: Record<string, unknown>, msg: string) => {
    try {
      log[level](obj, msg);
    } catch {
      process.stderr.write(`${msg}\n`);
    }
  };
  process.on('unhandledRejection', (reason: unknown) => {
    rejections++;
    const stack = reason instanceof Error && typeof reason.stack === 'string' ? reason.stack : undefined;
    safeLog(
      'error',
      { event: 'unhandled_rejection', error: describeThrown(reason), ...(stack ? { stack } : {}), count: rejections },
      'a promise rejection escaped every fault boundary; the gateway keeps running',
    );
  });
  process.on('uncaughtException', (err: unknown, origin: string) => {
    const stack = err instanceof Error && typeof err.stack === 'string' ? err.stack : undefined;
    if (fatal) {
      safeLog(
        'error',
        { event: 'uncaught_exception', error: describeThrown(err), origin, ...(stack ? { stack } : {}) },
        'another uncaught exception during the emergency shutdown',
      );
      return;
    }
    fatal = true;
    safeLog(
      'fatal',
      { event: 'uncaught_exception', error: describeThrown(err), origin, ...(stack ? { stack } : {}) },
      'an exception escaped every fault boundary; shutting down gracefully',
    );
    if (!shutdown) process.exit(EXIT_UNCAUGHT);
    const deadline = setTimeout(() => {
      safeLog('error', { event: 'shutdown_deadline' }, 'emergency shutdown did not finish in time; exiting');
      process.exit(EXIT_UNCAUGHT);
    }, graceMs + 5_000);
    deadline.unref();
    shutdown().then(
      () => {
        safeLog('error', { event: 'stopped', reason: 'uncaught_exception' }, 'gateway stopped after an uncaught exception');
        process.exit(EXIT_UNCAUGHT);
      },
      (e: unknown) => {
        safeLog('error', { event: 'shutdown_failed', error: describeThrown(e) }, 'emergency shutdown failed');
        process.exit(EXIT_UNCAUGHT);
      },
    );
  });
  return {
    onFatal(fn, ms) {
      shutdown = fn;
      graceMs = ms;
    },
  };
}
