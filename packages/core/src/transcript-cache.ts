import { lastBoundary } from './context/compaction-view.js';
import type { Entry, Fence, NewEntry, Storage } from './storage.js';

/**
 * What the model's view needs of a transcript (as `Storage.sessions.loadFromBoundary` reads it):
 * from the last boundary on, the entries after its `throughSeq` and the entries of its own turn.
 */
function dropSummarized(entries: Entry[]): Entry[] {
  const boundary = lastBoundary(entries);
  if (!boundary) return entries;
  const { throughSeq } = boundary.payload;
  const turnId = entries[boundary.index]!.turnId;
  return entries.filter((e) => e.seq > throughSeq || (turnId !== null && e.turnId === turnId));
}

/**
 * The transcripts of recently active sessions, so a turn does not reload and re-parse its whole
 * history from the database. Bounded (least recently used first out), so memory stays flat no
 * matter how many sessions a gateway serves. Only the turn engine writes transcripts, one turn
 * at a time per session, so what the store returns for each write is mirrored here in order —
 * never entries it did not store (no guessed sequence numbers). From a session's last `compact`
 * boundary on, only what the model's view is built from is held (see `loadFromBoundary`): what the
 * boundary summarized is neither loaded nor kept.
 */
export class TranscriptCache {
  private readonly map = new Map<string, Entry[]>();
  private entries = 0;
  /** The session lease this replica holds for a session (replicas on PostgreSQL): presented by every transcript write. */
  fence: (sessionId: string) => Fence | undefined = () => undefined;

  /**
   * @param max sessions kept at most
   * @param maxEntries entries kept at most over all sessions (the session in use always stays)
   */
  constructor(
    private readonly storage: Storage,
    private readonly max: number,
    private readonly maxEntries = 50_000,
  ) {}

  // Drops least recently used sessions until both bounds hold; the newest session always stays.
  private trim(): void {
    for (const [id, list] of this.map) {
      if (this.map.size <= 1 || (this.map.size <= this.max && this.entries <= this.maxEntries)) break;
      this.map.delete(id);
      this.entries -= list.length;
    }
  }

  /** The session's entries (loaded on a miss). The array is shared: do not mutate it. */
  async get(sessionId: string): Promise<Entry[]> {
    const hit = this.map.get(sessionId);
    if (hit) {
      this.map.delete(sessionId);
      this.map.set(sessionId, hit);
      return hit;
    }
    const { sessions } = this.storage;
    const entries = sessions.loadFromBoundary ? await sessions.loadFromBoundary(sessionId) : dropSummarized(await sessions.load(sessionId));
    this.map.set(sessionId, entries);
    this.entries += entries.length;
    this.trim();
    return entries;
  }

  /** Appends durably and mirrors the stored entries. */
  async append(sessionId: string, entries: NewEntry[]): Promise<Entry[]> {
    const fence = this.fence(sessionId);
    const stored = fence ? await this.storage.sessions.append(sessionId, entries, fence) : await this.storage.sessions.append(sessionId, entries);
    const cached = this.map.get(sessionId);
    if (cached) this.push(cached, stored);
    return stored;
  }

  /**
   * Mirrors entries a storage call stored and returned (turn begin and finish, steer absorb),
   * with the sequence numbers the store gave them.
   */
  mirror(sessionId: string, stored: readonly Entry[]): void {
    const cached = this.map.get(sessionId);
    if (!cached || stored.length === 0) return;
    this.push(cached, stored);
  }

  // Adds stored entries; a boundary among them drops what it summarized (its own turn's entries stay).
  private push(cached: Entry[], stored: readonly Entry[]): void {
    cached.push(...stored);
    this.entries += stored.length;
    if (stored.some((e) => e.kind === 'compact')) {
      const kept = dropSummarized(cached);
      this.entries -= cached.length - kept.length;
      cached.length = 0;
      for (const e of kept) cached.push(e);
    }
    this.trim();
  }

  /** The entries of one turn, from a session's cached transcript. */
  async turn(sessionId: string, turnId: string): Promise<Entry[]> {
    return (await this.get(sessionId)).filter((e) => e.turnId === turnId);
  }

  drop(sessionId: string): void {
    const list = this.map.get(sessionId);
    if (list) this.entries -= list.length;
    this.map.delete(sessionId);
  }

  /** Sessions and entries held now (for tests and stats). */
  size(): { sessions: number; entries: number } {
    return { sessions: this.map.size, entries: this.entries };
  }
}
