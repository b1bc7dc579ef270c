import type { NewEntry } from '../storage.js';

/**
 * The payload of a `compact` transcript entry: a compaction boundary, appended, never rewriting
 * anything. The summary covers every entry with `seq <= throughSeq`; the model's view of the
 * session is the summary (as the first user message) followed by the entries after `throughSeq`.
 * The last boundary wins.
 */
export interface CompactPayload {
  summary: string;
  throughSeq: number;
  trigger: 'auto' | 'reactive' | 'manual';
  tokensBefore: number;
  tokensAfter: number;
  model: string;
  /** What the person asked the summary to focus on (`/compact <instructions>`). */
  instructions?: string;
  /** Turns dropped after the previous boundary without a summary (the reactive last resort). */
  dropped?: number;
}

/** The last valid boundary of `entries` and where it stands; null without one. */
export function lastBoundary(entries: readonly NewEntry[]): { index: number; payload: CompactPayload } | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind !== 'compact') continue;
    const p = e.payload as Partial<CompactPayload> | null;
    if (p && typeof p.summary === 'string' && typeof p.throughSeq === 'number' && Number.isFinite(p.throughSeq))
      return { index: i, payload: p as CompactPayload };
  }
  return null;
}

/** The sequence number of a stored entry; undefined for one not stored yet. */
export function seqOf(entry: NewEntry): number | undefined {
  const seq = (entry as { seq?: unknown }).seq;
  return typeof seq === 'number' ? seq : undefined;
}

/**
 * The entries the model's view is built from, and the summary it opens with: after the last
 * boundary, the entries past its `throughSeq` (boundary and microcompact markers left out); without
 * one, every entry.
 */
export function viewFromBoundary(entries: readonly NewEntry[]): { summary: string | null; entries: readonly NewEntry[] } {
  const boundary = lastBoundary(entries);
  if (!boundary) return { summary: null, entries };
  const through = boundary.payload.throughSeq;
  const kept = entries.filter((e, i) => e.kind !== 'compact' && (i > boundary.index || (seqOf(e) ?? Number.POSITIVE_INFINITY) > through));
  return { summary: boundary.payload.summary, entries: kept };
}
