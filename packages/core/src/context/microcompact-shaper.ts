import { lastBoundary } from './compaction-view.js';
import { clearableResults, type Message, type MicrocompactSettings, microcompactView, type RequestShaper } from '@switchboard/agent';
import type { NewEntry } from '../storage.js';
import type { TurnJournal } from '../turn-journal.js';
import type { ContextMeter } from './meter.js';

/** The payload of a `microcompact` transcript entry: one sticky cut (see docs/storage.md). */
export interface MicrocompactPayload {
  /** tool_use ids whose result bodies the model sees as a placeholder from now on. */
  cleared: string[];
  /** The request's tokens before the cut (the meter's measure). */
  tokensBefore: number;
  /** The request's tokens after it (the meter's estimate). */
  tokensAfter: number;
}

/**
 * The cleared set of a session as its entries leave it: the union of the `cleared` ids of every
 * `microcompact` marker after the last valid `compact` boundary (`lastBoundary`, as the view).
 * Malformed markers are skipped.
 */
export function clearedSince(entries: readonly NewEntry[]): Set<string> {
  // The same boundary the view starts from (a malformed `compact` entry is not one).
  const from = (lastBoundary(entries)?.index ?? -1) + 1;
  const cleared = new Set<string>();
  for (let i = from; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.kind !== 'microcompact' || typeof entry.payload !== 'object' || entry.payload === null) continue;
    const ids = Object.hasOwn(entry.payload, 'cleared') ? (entry.payload as { cleared: unknown }).cleared : undefined;
    if (!Array.isArray(ids)) continue;
    for (const id of ids) if (typeof id === 'string') cleared.add(id);
  }
  return cleared;
}

/** What one turn's microcompact shaper works with. */
export interface MicrocompactShaperOptions {
  meter: ContextMeter;
  settings: MicrocompactSettings;
  /** The session's cleared set at turn start ({@link clearedSince}); the shaper adds to its own copy. */
  cleared: ReadonlySet<string>;
  /** Persists one cut's marker (through the turn's journal, durably) before the view it makes is sent. May throw. */
  record(marker: MicrocompactPayload): Promise<void>;
}

/**
 * Microcompact as a {@link RequestShaper} (docs/context.md, "Microcompact"); it goes right after
 * the meter. Every call sends the view with the cleared results as placeholders
 * (`microcompactView`). When that view measures past `threshold · W`, every result older than the
 * last `keepTurns` turns is cleared at once and a marker is recorded; between cuts the view does
 * not change, so the prompt cache holds. A marker that cannot be recorded cancels its cut (the
 * previous view is sent). Never throws.
 */
export function microcompactShaper(options: MicrocompactShaperOptions): RequestShaper {
  const { meter, settings, record } = options;
  const cleared = new Set(options.cleared);
  return {
    async shape(_history, send, info) {
      const view = microcompactView(send, cleared);
      try {
        const limit = settings.threshold * meter.window;
        const tokensBefore = await meter.measure(view, limit, info.signal);
        if (tokensBefore <= limit) return { send: view };
        const fresh = clearableResults(send, settings.keepTurns).filter((id) => !cleared.has(id));
        if (fresh.length === 0) return { send: view };
        const next = new Set([...cleared, ...fresh]);
        const cut: Message[] = microcompactView(send, next);
        const tokensAfter = meter.estimate(cut);
        // A cut that frees too little would break the prompt cache for nothing (see minGain).
        if (tokensBefore - tokensAfter < (settings.minGain ?? 0) * meter.window) return { send: view };
        await record({ cleared: fresh, tokensBefore, tokensAfter });
        for (const id of fresh) cleared.add(id);
        return { send: cut };
      } catch {
        return { send: view };
      }
    },
  };
}

/**
 * The microcompact shaper of one turn: its cleared set loaded from the session's markers (stored
 * and waiting), each new marker added to the turn's journal and made durable before the view it
 * makes is sent, so that a restart rebuilds the same view.
 */
export async function microcompactForTurn(journal: TurnJournal, meter: ContextMeter, settings: MicrocompactSettings): Promise<RequestShaper> {
  return microcompactShaper({
    meter,
    settings,
    cleared: clearedSince(await journal.transcript()),
    record: async (marker) => {
      journal.add([{ kind: 'microcompact', turnId: journal.turnId, payload: marker }]);
      await journal.flush();
    },
  });
}
