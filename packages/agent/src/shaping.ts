import type { QueryResult } from './events.js';
import type { Message, Usage } from './messages.js';

/**
 * The context-management seam of the query loop (see docs/context.md). Before every model call
 * the loop hands its history to a chain of {@link RequestShaper}s, cheapest first (microcompact,
 * then auto-compact); each gets what the previous one decided to send. The loop's own history is
 * only replaced when a shaper says so (`history`, after a compaction moved the boundary).
 */

/** What one model call sends, as the shapers decided. */
export interface Shaped {
  /** The messages to send: a view (the loop's history is not changed by it). */
  send: Message[];
  /**
   * Set when a shaper moved the session's boundary (a compaction): the loop's history from now
   * on (the boundary summary and everything after it). Later shapers and calls start from it.
   */
  history?: Message[];
}

/** What a shaper is told about the call it shapes. */
export interface CallInfo {
  /** Model calls the turn made before this one (0: the turn's first call). */
  call: number;
  /** The model this call goes to. */
  model: string;
  signal: AbortSignal;
}

/** What a shaper is told when the API refused the request as too long. */
export interface RecoverInfo extends CallInfo {
  /** Recoveries already tried for this call (0: the first refusal). */
  attempt: number;
}

/**
 * One step of context management.
 *
 * `shape` — When: before every model call of the turn (after the budget check), in chain order.
 * May: return `{ send }` (a view) or `{ send, history }` (the boundary moved). Must not: throw
 * (a failure it cannot handle returns its input unchanged), change `history` or `send` in place.
 * On throw: the query generator throws (the engine fails the turn as an internal error).
 *
 * `recover` — When: the API answered `prompt_too_long` for a call this shaper's chain shaped;
 * each shaper of the chain is asked in order until one returns a result. May: return a smaller
 * request (it is sent once more); null: nothing this shaper can do. The loop asks again after
 * each further refusal of the same call, with `attempt` counted up, and ends the turn
 * `prompt_too_long` once every shaper returns null. Must not: throw.
 *
 * `observe` — When: after every completed call, with what was sent and what the API counted
 * (calibrates a token estimate). Must not: throw.
 */
export interface RequestShaper {
  shape(history: readonly Message[], send: readonly Message[], info: CallInfo): Promise<Shaped>;
  recover?(history: readonly Message[], send: readonly Message[], info: RecoverInfo): Promise<Shaped | null>;
  observe?(sent: readonly Message[], usage: Usage): void;
}

/**
 * A check before every model call (budgets): a result ends the turn with it instead of making
 * the call. When: before the shapers, for every call, the first included. Must not: throw (the
 * query generator would throw it).
 */
export type BeforeCall = (info: CallInfo) => Promise<QueryResult | null>;
