import type { Entry, NewEntry, Storage } from './storage.js';

/**
 * The transcripts of recently active sessions, so a turn does not reload and re-parse its whole
 * history from the database. Bounded (least recently used first out), so memory stays flat no
 * matter how many sessions a gateway serves. Only the turn engine writes transcripts, one turn
 * at a time per session, so appends can be mirrored here in order.
 */
export class TranscriptCache {
  private readonly map = new Map<string, Entry[]>();

  constructor(
    private readonly storage: Storage,
    private readonly max: number,
  ) {}

  /** The session's entries (loaded on a miss). The array is shared: do not mutate it. */
  async get(sessionId: string): Promise<Entry[]> {
    const hit = this.map.get(sessionId);
    if (hit) {
      this.map.delete(sessionId);
      this.map.set(sessionId, hit);
      return hit;
    }
    const entries = await this.storage.sessions.load(sessionId);
    this.map.set(sessionId, entries);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
    return entries;
  }

  /** Appends durably and mirrors the stored entries. */
  async append(sessionId: string, entries: NewEntry[]): Promise<Entry[]> {
    const stored = await this.storage.sessions.append(sessionId, entries);
    this.map.get(sessionId)?.push(...stored);
    return stored;
  }

  /**
   * Mirrors entries a storage call appended without returning them (turn begin, steer absorb):
   * the store numbers them right after the last seq.
   */
  mirror(sessionId: string, entries: NewEntry[]): void {
    const cached = this.map.get(sessionId);
    if (!cached) return;
    let seq = cached.at(-1)?.seq ?? 0;
    const now = new Date();
    for (const e of entries) cached.push({ ...e, sessionId, seq: ++seq, createdAt: now });
  }

  /** The entries of one turn, from a session's cached transcript. */
  async turn(sessionId: string, turnId: string): Promise<Entry[]> {
    return (await this.get(sessionId)).filter((e) => e.turnId === turnId);
  }

  drop(sessionId: string): void {
    this.map.delete(sessionId);
  }
}
