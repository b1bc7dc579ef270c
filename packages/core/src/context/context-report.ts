import { messagesChars, requestChars, type Message, type ModelSpec, type SystemBlock, type TokenEstimator, type ToolSpec } from '@switchboard/agent';
import type { Entry } from '../storage.js';
import { autoModeLine, type AutoModeStatus } from '../policy/auto-mode-status.js';
import { contextMeter } from './meter.js';
import { clearedSince } from './microcompact-shaper.js';
import { requestView } from './request-view.js';

/** What fills a request, as `/context` lists it. */
export type ContextConsumerName = 'system' | 'tools' | 'tool_results' | 'history' | 'summary';

/** The consumers in a fixed order (ties in the report keep it), with the words chats show for them. */
export const CONTEXT_CONSUMERS: ReadonlyMap<ContextConsumerName, string> = new Map([
  ['system', 'system prompt'],
  ['tools', 'tool schemas'],
  ['tool_results', 'tool results'],
  ['history', 'history'],
  ['summary', 'summary'],
]);

/** One consumer's share of the request. */
export interface ContextConsumer {
  name: ContextConsumerName;
  /** Estimated tokens (each consumer rounded up on its own, so they may add up to a few more than `tokens`). */
  tokens: number;
}

/** The last compaction boundary of a session (its newest `compact` entry). */
export interface LastCompaction {
  /** When the boundary was written (ISO time). */
  at: string;
  trigger: 'auto' | 'reactive' | 'manual';
  /** The request's tokens before and after the compaction, as the compaction measured them. */
  tokensBefore: number;
  tokensAfter: number;
}

/** What `/context` shows: never a secret (counts, the model name and a time only). */
export interface ContextReport {
  /** The model the next request goes to. */
  model: string;
  /** Estimated tokens of the next request: system prompt, tool schemas and the session's view (from the last boundary, microcompacted). */
  tokens: number;
  /** The model's whole context window (input and output). */
  contextWindow: number;
  /** `W = contextWindow − outputReserve`: what a request may fill; compaction thresholds are fractions of it. */
  window: number;
  /** The messages of the view. */
  messages: number;
  /** Tool results the model sees as a placeholder (microcompact). */
  clearedResults: number;
  /** Null: the session was never compacted. */
  lastCompaction: LastCompaction | null;
  /** Every consumer, largest first. */
  consumers: ContextConsumer[];
  /** Set when the session is in auto mode (see `autoModeStatus`). */
  auto?: AutoModeStatus;
}

/** What the report is computed from. */
export interface ContextReportInput {
  /** The session's stored entries, oldest first. */
  entries: readonly Entry[];
  /** The agent's system prompt and tool schemas (what every request of the session carries). */
  system: readonly SystemBlock[];
  tools: readonly ToolSpec[];
  /** The model the next request goes to. */
  spec: ModelSpec;
  /** The calibrated estimator of that model (the engine's, see `TokenEstimators`). */
  estimator: TokenEstimator;
  /** The messages the model would get next; default {@link requestView} of `entries`. */
  view?: readonly Message[];
}

const TRIGGERS: ReadonlySet<string> = new Set(['auto', 'reactive', 'manual']);

/** The newest well-formed `compact` entry as a {@link LastCompaction}, with its summary; null when there is none. */
export function lastCompaction(entries: readonly Entry[]): (LastCompaction & { summary: string }) | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind !== 'compact') continue;
    const p = (e.payload ?? {}) as Record<string, unknown>;
    const { summary, trigger, tokensBefore, tokensAfter } = p;
    if (typeof summary !== 'string' || typeof trigger !== 'string' || !TRIGGERS.has(trigger)) continue;
    if (!isCount(tokensBefore) || !isCount(tokensAfter)) continue;
    const at = e.createdAt instanceof Date && Number.isFinite(e.createdAt.getTime()) ? e.createdAt.toISOString() : new Date(0).toISOString();
    return { at, trigger: trigger as LastCompaction['trigger'], tokensBefore, tokensAfter, summary };
  }
  return null;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** The characters one block adds to a request, as the token estimate counts them (framing included). */
function blockChars(block: Message['content'][number]): number {
  return block.type === 'tool_use' ? messagesChars([{ role: 'assistant', content: [block] }]) : messagesChars([{ role: 'user', content: [block] }]);
}

/**
 * How full a session's next request is and what fills it. Pure: the total is the turn meter's
 * estimate of the view (`contextMeter`), so it is the number the shapers decide on; each consumer
 * is its own characters through the same calibrated estimator. A text block that carries the last
 * boundary's summary counts as `summary`, tool result blocks as `tool_results`, every other block
 * (the person's text, the assistant's, tool calls and their input) as `history`.
 */
export function contextReport(input: ContextReportInput): ContextReport {
  const { entries, system, tools, spec, estimator } = input;
  const view = input.view ?? requestView(entries);
  const meter = contextMeter(spec, estimator, system, tools);
  const last = lastCompaction(entries);
  const chars = new Map<ContextConsumerName, number>([
    ['system', requestChars(system, [], [])],
    ['tools', requestChars([], tools, [])],
    ['tool_results', 0],
    ['history', 0],
    ['summary', 0],
  ]);
  const clearedIds = clearedSince(entries);
  let cleared = 0;
  for (const message of view) {
    for (const block of message.content) {
      const name: ContextConsumerName =
        block.type === 'tool_result'
          ? 'tool_results'
          : block.type === 'text' && last && last.summary.length > 0 && block.text.includes(last.summary)
            ? 'summary'
            : 'history';
      if (block.type === 'tool_result' && clearedIds.has(block.tool_use_id)) cleared++;
      chars.set(name, (chars.get(name) ?? 0) + blockChars(block));
    }
  }
  const order = [...CONTEXT_CONSUMERS.keys()];
  const consumers = order
    .map((name) => ({ name, tokens: estimator.tokens(chars.get(name) ?? 0) }))
    .sort((a, b) => b.tokens - a.tokens || order.indexOf(a.name) - order.indexOf(b.name));
  return {
    model: spec.name,
    tokens: meter.estimate(view),
    contextWindow: meter.contextWindow,
    window: meter.window,
    messages: view.length,
    clearedResults: cleared,
    lastCompaction: last ? { at: last.at, trigger: last.trigger, tokensBefore: last.tokensBefore, tokensAfter: last.tokensAfter } : null,
    consumers,
  };
}

/** `part` as a percentage of `whole` with one decimal (`12.5%`; `—` for an empty whole), as chats show shares. */
export function sharePercent(part: number, whole: number): string {
  return whole > 0 && Number.isFinite(part) ? `${((100 * part) / whole).toFixed(1)}%` : '—';
}

/** An ISO time as chats show it: `YYYY-MM-DD HH:MM UTC`. */
export function utcMinute(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** `/context` in plain words, for a channel to lay out and mark up (the model name is raw: the channel escapes it). */
export interface ContextReportLines {
  /** `12,345 of 180,000 tokens (6.9%)`: the next request against `W`. */
  size: string;
  /** The model the next request goes to, unescaped. */
  model: string;
  /** One line each: the window and what is kept for the answer, the last compaction, and the cleared tool results when there are any. */
  details: string[];
  /** The consumers that fill the request (empty ones left out), largest first: their words and their tokens (`6,000`). */
  consumers: { label: string; tokens: string }[];
}

/** The words of `/context` every chat shows: the channels only add their layout and markup. */
export function contextReportLines(c: ContextReport): ContextReportLines {
  const n = (v: number) => v.toLocaleString('en-US');
  const last = c.lastCompaction;
  return {
    size: `${n(c.tokens)} of ${n(c.window)} tokens (${sharePercent(c.tokens, c.window)})`,
    model: c.model,
    details: [
      `Window: ${n(c.contextWindow)} tokens, ${n(c.contextWindow - c.window)} kept for the answer`,
      last ? `Last compaction: ${utcMinute(last.at)} (${last.trigger}), ${n(last.tokensBefore)} → ${n(last.tokensAfter)} tokens` : 'Last compaction: never',
      ...(c.clearedResults > 0 ? [`Cleared tool results: ${c.clearedResults}`] : []),
      ...(c.auto ? [autoModeLine(c.auto)] : []),
    ],
    consumers: c.consumers.filter((x) => x.tokens > 0).map((k) => ({ label: CONTEXT_CONSUMERS.get(k.name) ?? k.name, tokens: n(k.tokens) })),
  };
}
