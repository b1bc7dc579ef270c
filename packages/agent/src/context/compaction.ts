import type { Message, TextBlock, UserMessage } from '../messages.js';

/**
 * The pure parts of compaction (docs/context.md, "Compaction"): where to cut a history, what the
 * summary call sends, what the model sees afterwards, and the last resort of dropping turns. A
 * *turn start* is a user message without tool results (the person's message, a steered or
 * "continue" message): a kept tail that starts there never splits a tool_use from its result.
 */

/** The first words of every summary request: how a summary call is told apart from a turn's call (tests, fakes). */
export const SUMMARY_REQUEST_MARKER = 'Summarize the conversation below for your own future reference.';

/** The summary call's instruction: a structured summary the model can continue from. */
export const SUMMARY_INSTRUCTION = `${SUMMARY_REQUEST_MARKER} It will replace the conversation in your context, so keep everything needed to continue it. Write plain text under these headings:
1. People: who takes part, their names, roles and preferences.
2. Decisions: what was decided, and why.
3. Open tasks: what is still to be done, and by whom.
4. Facts to keep: names, numbers, dates, identifiers, links, commands and errors that matter later.
5. Files touched: paths read, written or edited, and what changed.
Do not call tools. Do not answer the conversation; only summarize it. Be concise.`;

/** How the summary opens the first user message of a compacted history. */
export const SUMMARY_PREFIX = 'This conversation was compacted. Summary of everything before this point:';

/** The text block that carries a boundary's summary as the first block of the model's history. */
export function summaryBlock(summary: string): TextBlock {
  return { type: 'text', text: `${SUMMARY_PREFIX}\n\n${summary}` };
}

/** The note a boundary's summary gets when the oldest turns after it were dropped (reactive last resort). */
export function droppedNote(turns: number): string {
  return `[${turns} earlier ${turns === 1 ? 'turn was' : 'turns were'} dropped from the context: the conversation no longer fitted the model's window.]`;
}

/** Indexes of the turn starts: user messages holding no tool_result block. */
export function turnStarts(messages: readonly Message[]): number[] {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'user' && m.content.length > 0 && m.content.every((b) => b.type !== 'tool_result')) starts.push(i);
  });
  return starts;
}

/** How {@link chooseCut} measures and what it keeps. */
export interface CutOptions {
  /** Turns kept after the cut (K, at least 1); fewer when they alone exceed `maxTailTokens`. */
  keepTurns: number;
  /** The kept tail's size at most, in the unit of `tokens`. */
  maxTailTokens: number;
  /** The size of a list of messages (e.g. a request's estimated tokens). */
  tokens(messages: readonly Message[]): number;
}

/**
 * Where the kept tail starts: the start of the K-th last turn, or of a later one when the last K
 * turns alone are bigger than `maxTailTokens` (down to the last turn). Null when there is nothing
 * before the cut to summarize (a single turn, or no turn start after the first message).
 */
export function chooseCut(messages: readonly Message[], opts: CutOptions): number | null {
  const starts = turnStarts(messages);
  const keep = Math.max(1, Math.floor(opts.keepTurns));
  let best: number | null = null;
  for (let k = Math.min(keep, starts.length); k >= 1; k--) {
    const cut = starts[starts.length - k]!;
    if (cut <= 0) continue;
    best = cut;
    if (opts.tokens(messages.slice(cut)) <= opts.maxTailTokens) return cut;
  }
  return best;
}

/** How one message of the summarized part is written into the summary request. */
function serializeMessage(message: Message, blockChars: number): string {
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push(clip(block.text, blockChars));
    else if (block.type === 'tool_use') parts.push(`[called tool ${block.name} with ${clip(safeJson(block.input), blockChars)}]`);
    else if (block.type === 'image') parts.push(`[an image (${block.source.media_type})]`);
    else parts.push(`[tool result${block.is_error ? ' (error)' : ''}: ${clip(block.content, blockChars)}]`);
  }
  return `${message.role === 'user' ? 'User' : 'Assistant'}: ${parts.join('\n')}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '(unserializable input)';
  }
}

/** `text` cut to `max` characters: its head and tail with a note of what was left out. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil(max * 0.6);
  const tail = Math.max(0, max - head);
  return `${text.slice(0, head)} […${text.length - head - tail} characters omitted…] ${tail > 0 ? text.slice(-tail) : ''}`;
}

/** How {@link summaryRequest} bounds what it sends. */
export interface SummaryRequestOptions {
  /** What the person asked the summary to focus on (`/compact <instructions>`). */
  instructions?: string;
  /** The serialized conversation's size at most, in characters (the summary call must fit the window). */
  maxChars: number;
  /** One block's size at most, in characters (a long tool result is clipped to its head and tail). */
  blockChars?: number;
}

/**
 * The messages of the summary call: one user message with {@link SUMMARY_INSTRUCTION}, the
 * person's instructions, and the conversation serialized as text, so the call needs no tools and
 * no tool_use/tool_result pairing. Bounded by `maxChars`: beyond it the middle is left out (the
 * start — an earlier summary — and the most recent part are kept).
 */
export function summaryRequest(head: readonly Message[], opts: SummaryRequestOptions): UserMessage[] {
  const blockChars = Math.max(200, opts.blockChars ?? 4_000);
  const conversation = clip(head.map((m) => serializeMessage(m, blockChars)).join('\n\n'), Math.max(1_000, opts.maxChars));
  const instructions = opts.instructions?.trim() ? `\n\nThe person asked the summary to: ${opts.instructions.trim()}` : '';
  const text = `${SUMMARY_INSTRUCTION}${instructions}\n\n<conversation>\n${conversation}\n</conversation>`;
  return [{ role: 'user', content: [{ type: 'text', text }] }];
}

/**
 * The model's history after a boundary: the summary as the first user message, then the kept
 * tail. A tail that opens with a user message gets the summary as that message's first block
 * (roles keep alternating) — the same view a session rebuilt from its boundary has.
 */
export function compactedHistory(summary: string, tail: readonly Message[]): Message[] {
  const first = tail[0];
  if (first?.role === 'user') return [{ role: 'user', content: [summaryBlock(summary), ...first.content] }, ...tail.slice(1)];
  return [{ role: 'user', content: [summaryBlock(summary)] }, ...tail];
}

/** What {@link dropOldestTurns} decided. */
export interface DroppedTurns {
  /** Index in the given history where the kept part starts (a turn start). */
  cut: number;
  /** Turns dropped (turn starts before `cut`, the first message's included). */
  turns: number;
}

/**
 * The reactive last resort: the fewest oldest turns to drop so that what is left measures at most
 * `maxTokens` (the last turn is always kept; tool_use/tool_result pairs stay together because the
 * cut is a turn start). Null when the history has a single turn (nothing to drop).
 */
export function dropOldestTurns(messages: readonly Message[], maxTokens: number, tokens: (messages: readonly Message[]) => number): DroppedTurns | null {
  const starts = turnStarts(messages).filter((i) => i > 0);
  if (starts.length === 0) return null;
  for (const [n, cut] of starts.entries()) {
    if (tokens(messages.slice(cut)) <= maxTokens) return { cut, turns: n + 1 };
  }
  return { cut: starts.at(-1)!, turns: starts.length };
}
