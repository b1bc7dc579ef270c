import type { NewEntry, Storage, TurnFinish, TurnWrite } from './storage.js';
import type { NewUsageRecord } from './usage.js';
import type { TranscriptCache } from './transcript-cache.js';

/**
 * The writes of one turn, batched. Entries wait in memory until something a crash-resume needs
 * depends on them — the caller says when with {@link flush} (a tool call about to be checked or
 * run, a steer) — and otherwise go with the turn's end in one transaction ({@link finish}). The
 * turn's begin (state `running`) travels with the first flush; a turn that never flushes goes
 * from `queued` to its end in a single write, so a crash before it re-runs the turn from its
 * inbox item, as if it had never started.
 *
 * Only the turn's own flow writes through a journal, one call at a time; what the store returns
 * is mirrored into the transcript cache (with the store's sequence numbers).
 */
export class TurnJournal {
  private readonly waiting: NewEntry[] = [];
  /** Usage rows of completed model calls not stored yet: they go with the next flush or the finish. */
  private readonly calls: NewUsageRecord[] = [];
  private begun: boolean;

  /**
   * @param begun whether the turn is durably `running` already (a resumed turn that was running
   *   at the crash); a queued, suspended or approval-waiting turn is begun by its first flush.
   */
  constructor(
    private readonly storage: Storage,
    private readonly transcripts: TranscriptCache,
    readonly sessionId: string,
    readonly turnId: string,
    begun: boolean,
  ) {
    this.begun = begun;
  }

  /** Adds entries to write with the next flush or the finish, in order. */
  add(entries: readonly NewEntry[]): void {
    this.waiting.push(...entries);
  }

  /**
   * Adds a completed model call's usage row. It is stored with the next write of the turn — the
   * flush before anything a restart depends on (a tool call's check or run), or the end — so it
   * is durable before the turn can act on it, at no write of its own.
   */
  addCall(call: NewUsageRecord): void {
    this.calls.push(call);
  }

  /** Usage rows added and not written yet (a budget check adds these to the stored ones). */
  get pendingCalls(): readonly NewUsageRecord[] {
    return this.calls;
  }

  /** Entries added and not written yet. */
  get pending(): readonly NewEntry[] {
    return this.waiting;
  }

  /**
   * Makes the turn's begin and every waiting entry durable, in one transaction; nothing when
   * both are. The entries leave the queue only once stored.
   */
  async flush(): Promise<void> {
    if (this.begun && this.waiting.length === 0 && this.calls.length === 0) return;
    const entries = [...this.waiting];
    const calls = [...this.calls];
    const fence = this.transcripts.fence(this.sessionId);
    if (this.begun) {
      this.transcripts.mirror(this.sessionId, await this.storage.turns.append(this.turnId, entries, calls, fence));
    } else {
      const written = await this.storage.turns.begin(this.turnId, entries, calls, fence);
      this.begun = true;
      this.transcripts.mirror(this.sessionId, written.entries);
    }
    this.waiting.splice(0, entries.length);
    this.calls.splice(0, calls.length);
  }

  /** Writes the waiting entries and the turn's end (or suspension), and the ledger row of `end.delivery`, in one transaction. */
  async finish(end: Omit<TurnFinish, 'entries' | 'calls'>): Promise<TurnWrite> {
    const entries = [...this.waiting];
    const calls = [...this.calls];
    const fence = this.transcripts.fence(this.sessionId);
    const written = await this.storage.turns.finish(this.turnId, { ...end, entries, calls, ...(fence ? { fence } : {}) });
    this.waiting.splice(0, entries.length);
    this.calls.splice(0, calls.length);
    this.begun = true;
    this.transcripts.mirror(this.sessionId, written.entries);
    return written;
  }

  /** The session's transcript as this turn sees it: what is stored, then what waits. */
  async transcript(): Promise<NewEntry[]> {
    return [...(await this.transcripts.get(this.sessionId)), ...this.waiting];
  }

  /** This turn's entries, stored and waiting. */
  async ofTurn(): Promise<NewEntry[]> {
    return [...(await this.transcripts.turn(this.sessionId, this.turnId)), ...this.waiting.filter((e) => e.turnId === this.turnId)];
  }
}
