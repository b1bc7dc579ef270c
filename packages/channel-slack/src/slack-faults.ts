import type { Logger } from 'pino';
import { describeSlackError } from './slack-errors.js';

/**
 * The fault boundary's ledger for one Slack account: a task that failed in one conversation
 * (render, notice, approval press, slash command, envelope) is logged with channel, account and
 * conversation, counted, and summarised in `health()`; it never ends anything else.
 */
export class SlackFaults {
  private count = 0;
  private last: string | null = null;

  constructor(
    private readonly log: Logger,
    private readonly account: string,
  ) {}

  /** Records one failed task; never throws, whatever `err` is. */
  record(task: string, conversation: string | undefined, err: unknown): void {
    const d = describeSlackError(err);
    this.count++;
    this.last = `${task}${conversation ? ` in ${conversation}` : ''}: ${d.cause ?? d.code}`;
    try {
      this.log.error({ account: this.account, task, conversation, code: d.code, cause: d.cause, message: messageOf(err), faults: this.count }, 'slack task failed');
    } catch {
      // A logger that cannot serialise this must not take the boundary down with it.
    }
  }

  /** `3 failed tasks (last: render in C0123: msg_too_long)`, or null when none failed. */
  summary(): string | null {
    return this.count === 0 ? null : `${this.count} failed task${this.count === 1 ? '' : 's'} (last: ${this.last})`;
  }

  get total(): number {
    return this.count;
  }
}

/** The message of any thrown value, at most 300 characters; never throws. */
export function messageOf(err: unknown): string {
  try {
    const m = err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err);
    return String(m ?? typeof err).slice(0, 300);
  } catch {
    return 'unprintable error';
  }
}
