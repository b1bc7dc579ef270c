/**
 * The exec run queue: at most `perGateway` sandboxed runs at once across the gateway and at most
 * `perSession` for one session. Callers beyond that wait in one FIFO line; a waiter whose session
 * is at its own limit is skipped (it never blocks other sessions' waiters behind it).
 */

/** Gives a slot back; calling it more than once does nothing. */
export type ReleaseRunSlot = () => void;

/** The progress line the exec tool shows while its call waits in the queue. */
export const WAITING_FOR_RUNNER = 'waiting for a free runner';

interface Waiter {
  sessionId: string;
  grant: (release: ReleaseRunSlot) => void;
  /** Detaches the abort listener (called once the waiter is served). */
  detach: () => void;
}

/** The limits of an {@link ExecRunQueue}. */
export interface ExecRunQueueLimits {
  /** Runs at once across the gateway (an integer ≥ 1). */
  perGateway: number;
  /** Runs at once for one session (an integer ≥ 1). */
  perSession: number;
}

/** Counts concurrent exec runs per gateway and per session and queues the calls over the limits. */
export class ExecRunQueue {
  readonly perGateway: number;
  readonly perSession: number;
  private inUse = 0;
  private readonly bySession = new Map<string, number>();
  private readonly line: Waiter[] = [];

  constructor(limits: ExecRunQueueLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 1) throw new Error(`exec run queue: ${name} must be an integer of at least 1, got ${String(value)}`);
    }
    this.perGateway = limits.perGateway;
    this.perSession = limits.perSession;
  }

  /** Runs in progress across the gateway. */
  get active(): number {
    return this.inUse;
  }

  /** Runs in progress for one session. */
  activeFor(sessionId: string): number {
    return this.bySession.get(sessionId) ?? 0;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.line.length;
  }

  /**
   * Resolves with a release function once a slot is free for `sessionId` (at once when one is).
   * `onWait` is called once, synchronously, when the caller has to wait (an observer that throws is
   * ignored). An abort while waiting removes the caller from the line and rejects with the signal's
   * reason; an already aborted signal rejects at once. A served caller owns its slot until it
   * calls the release function.
   */
  acquire(sessionId: string, signal: AbortSignal | undefined, onWait?: () => void): Promise<ReleaseRunSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // The line is pumped on every release, so every waiter in it is blocked by its own session's
    // limit or a full gateway: a caller with room now jumps no one who could run.
    if (this.hasRoom(sessionId)) return Promise.resolve(this.take(sessionId));
    return new Promise<ReleaseRunSlot>((resolve, reject) => {
      const onAbort = () => {
        const index = this.line.indexOf(waiter);
        if (index < 0) return;
        this.line.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        sessionId,
        grant: resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      this.line.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        onWait?.();
      } catch {
        // A progress observer must not break the queue.
      }
    });
  }

  private hasRoom(sessionId: string): boolean {
    return this.inUse < this.perGateway && this.activeFor(sessionId) < this.perSession;
  }

  private take(sessionId: string): ReleaseRunSlot {
    this.inUse++;
    this.bySession.set(sessionId, this.activeFor(sessionId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const left = this.activeFor(sessionId) - 1;
      if (left > 0) this.bySession.set(sessionId, left);
      else this.bySession.delete(sessionId);
      this.pump();
    };
  }

  /** Serves, in line order, every waiter that has room now. */
  private pump(): void {
    for (let index = 0; index < this.line.length && this.inUse < this.perGateway; ) {
      const waiter = this.line[index] as Waiter;
      if (!this.hasRoom(waiter.sessionId)) {
        index++;
        continue;
      }
      this.line.splice(index, 1);
      waiter.detach();
      waiter.grant(this.take(waiter.sessionId));
    }
  }
}
