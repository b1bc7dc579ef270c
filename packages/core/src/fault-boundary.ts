import type { Logger } from 'pino';

/**
 * A short, loggable description of any thrown value: never throws, whatever it is given (an
 * Error without a message, a string, null, an object with a throwing getter, a revoked proxy…).
 */
export function describeThrown(err: unknown): string {
  try {
    if (err instanceof Error) {
      const msg = typeof err.message === 'string' && err.message.length > 0 ? err.message : '(no message)';
      const name = typeof err.name === 'string' && err.name !== 'Error' ? `${err.name}: ` : '';
      const code = (err as { code?: unknown }).code;
      return `${name}${msg}${typeof code === 'string' || typeof code === 'number' ? ` (${code})` : ''}`;
    }
    if (typeof err === 'string') return err.length > 0 ? err : '(empty string)';
    if (err === undefined) return '(undefined)';
    if (err === null) return '(null)';
    if (typeof err === 'object') {
      const msg = (err as { message?: unknown }).message;
      if (typeof msg === 'string' && msg.length > 0) return msg;
      const json = JSON.stringify(err);
      return typeof json === 'string' ? json.slice(0, 500) : Object.prototype.toString.call(err);
    }
    return String(err);
  } catch {
    return '(an error that cannot be described)';
  }
}

const REPEAT_QUIET_MS = 60_000;

/** A thrown value described for the boundary: the text shown in health and logs, plus log fields. */
export interface FaultDescription {
  text: string;
  fields?: Record<string, unknown>;
}

/** Where a channel task ran: what a boundary log line and the failure count name. */
export interface FaultScope {
  /** Channel id, e.g. `telegram:main`. */
  channel: string;
  /** What the task does, e.g. `typing`, `render`, `approval card`, `poll`. */
  task: string;
  /** The platform conversation (chat id), when the task belongs to one. */
  conversation?: string;
}

/**
 * Counts and remembers failures of one channel's tasks, for `health()`: a failure in one
 * conversation is logged with its scope and counted, and never propagates.
 */
export class FaultBoundary {
  private count = 0;
  private last: { at: Date; scope: FaultScope; error: string } | null = null;

  /**
   * @param log where failures are logged
   * @param describe turns a thrown value into text (e.g. one that scrubs a token), optionally with
   *   more fields for the log line (a platform's error code); must not throw, and is itself guarded.
   */
  constructor(
    private readonly log: Logger,
    private readonly describe: (err: unknown) => string | FaultDescription = describeThrown,
  ) {}

  /** Failures so far. */
  get failures(): number {
    return this.count;
  }

  /** The most recent failure, or null. */
  get lastFailure(): { at: Date; scope: FaultScope; error: string } | null {
    return this.last;
  }

  /** Records one failure (logged, counted). Never throws. */
  record(scope: FaultScope, err: unknown): void {
    let error: string;
    let fields: Record<string, unknown> = {};
    try {
      const d = this.describe(err);
      if (typeof d === 'string') error = d;
      else ({ text: error, fields = {} } = d);
    } catch {
      error = describeThrown(err);
    }
    this.count++;
    const prev = this.last;
    const now = new Date();
    // The same failure again within a minute (typing every few seconds against a peer without
    // sendChatAction) is counted and logged at debug level, so the log is not flooded.
    const repeat =
      prev !== null &&
      prev.error === error &&
      prev.scope.task === scope.task &&
      prev.scope.conversation === scope.conversation &&
      now.getTime() - prev.at.getTime() < REPEAT_QUIET_MS;
    this.last = { at: now, scope, error };
    try {
      this.log[repeat ? 'debug' : 'error'](
        {
          ...fields,
          event: 'channel_task_failed',
          channel: scope.channel,
          task: scope.task,
          ...(scope.conversation !== undefined ? { conversation: scope.conversation } : {}),
          error,
          failures: this.count,
          ...(repeat ? { repeated: true } : {}),
        },
        `${scope.channel}: ${scope.task} failed`,
      );
    } catch {
      // A logger that throws must not take the task's caller with it.
    }
  }

  /** Runs `task`; a rejection or throw is recorded and the result is `undefined`. Never rejects. */
  async run<T>(scope: FaultScope, task: () => Promise<T> | T): Promise<T | undefined> {
    try {
      return await task();
    } catch (err) {
      this.record(scope, err);
      return undefined;
    }
  }

  /** Starts `task` without awaiting it, inside the boundary; returns the settled promise. */
  spawn(scope: FaultScope, task: () => Promise<unknown>): Promise<void> {
    return this.run(scope, task).then(() => undefined);
  }

  /** A `health()` suffix, e.g. `3 task failures, last: typing in 1001: …`; empty when none. */
  summary(): string {
    if (!this.last) return '';
    const where = this.last.scope.conversation !== undefined ? ` in ${this.last.scope.conversation}` : '';
    return `${this.count} task failure${this.count === 1 ? '' : 's'}, last: ${this.last.scope.task}${where}: ${this.last.error}`;
  }
}
