import { type Message, microcompactView } from '@switchboard/agent';
import type { NewEntry } from '../storage.js';
import { rebuildMessages } from '../transcript.js';
import { clearedSince } from './microcompact-shaper.js';

/**
 * The messages the model would get next for a session, from its stored entries: what
 * {@link rebuildMessages} rebuilds (from the last compaction boundary on) with the sticky
 * microcompact cut applied — the same view the microcompact shaper sends (`microcompactView`
 * over the cleared set of the markers after the last boundary, {@link clearedSince}). Pure; the
 * entries are not changed.
 */
export function requestView(entries: readonly NewEntry[]): Message[] {
  return microcompactView(rebuildMessages(entries).messages, clearedSince(entries));
}
