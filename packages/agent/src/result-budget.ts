import type { ToolResultBlock } from './messages.js';
import type { AnyTool } from './tool.js';

/**
 * The tool-result budget (docs/context.md, "Tool-result budget"): every tool result the model
 * sees is at most its tool's budget, and the results of one user message share an aggregate
 * budget. An oversized result is kept whole in the session store (`fullContent`); the model sees
 * its head and tail with a note naming the reference (the tool_use id) it can page with
 * `read_result`. Pure functions.
 */

/** The budgets of one turn's tool results, in characters. */
export interface ResultBudgets {
  /** A tool that declares no `maxResultChars` (MCP tools included) gets this budget. */
  maxChars: number;
  /** The results of one user message together; past it the largest are cut further. */
  maxMessageChars: number;
}

/** The budgets when a turn configures none (the gateway's defaults, `context.toolResults`). */
export const DEFAULT_RESULT_BUDGETS: ResultBudgets = { maxChars: 50_000, maxMessageChars: 200_000 };

/** The name of the tool that pages a stored whole result. */
export const READ_RESULT_TOOL = 'read_result';

/** A tool's budget in characters, or null when it is exempt (`resultBudget: 'exempt'`). */
export function toolResultBudget(tool: Pick<AnyTool, 'maxResultChars' | 'resultBudget'>, budgets: ResultBudgets): number | null {
  if (tool.resultBudget === 'exempt') return null;
  return tool.maxResultChars ?? budgets.maxChars;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The first `n` UTF-16 units of `text`, one less when the cut would split a surrogate pair. */
export function headOf(text: string, n: number): string {
  const end = Math.max(0, Math.min(text.length, Math.floor(n)));
  if (end > 0 && end < text.length && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) return text.slice(0, end - 1);
  return text.slice(0, end);
}

/** The last `n` UTF-16 units of `text`, one less when the cut would split a surrogate pair. */
export function tailOf(text: string, n: number): string {
  const count = Math.max(0, Math.min(text.length, Math.floor(n)));
  let start = text.length - count;
  if (start > 0 && start < text.length && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start += 1;
  return text.slice(start);
}

/** What the model sees of a result cut to a budget. */
export interface CutResult {
  content: string;
  /** Whether it was cut (then the whole is stored as `fullContent`). */
  cut: boolean;
}

/** The share of a cut result's budget that goes to its tail (the rest is its head)… */
const TAIL_SHARE = 0.25;
/** …once the budget is at least this large (a smaller budget shows the head only). */
const MIN_TAIL_BUDGET = 2000;

/**
 * Cuts `content` to `budget` characters of its own — its head and, for a budget of at least
 * {@link MIN_TAIL_BUDGET}, its tail; the notes come on top, a few hundred characters — naming
 * `reference` and how to page the omitted part with `read_result`. Content within the budget is
 * returned unchanged. Never splits a surrogate pair.
 */
export function cutResult(content: string, budget: number, reference: string): CutResult {
  const max = Math.max(0, Math.floor(Number.isFinite(budget) ? budget : 0));
  if (content.length <= max) return { content, cut: false };
  const tailBudget = max >= MIN_TAIL_BUDGET ? Math.floor(max * TAIL_SHARE) : 0;
  const head = headOf(content, max - tailBudget);
  const tail = tailOf(content, tailBudget);
  const omitted = content.length - head.length - tail.length;
  const ref = JSON.stringify(reference.slice(0, 200));
  const parts = [
    head,
    `[… ${omitted} characters omitted from offset ${head.length}. The whole result is stored with reference ${ref}: ` +
      `page it with read_result {"reference": ${ref}, "offset": ${head.length}, "length": …}]`,
  ];
  if (tail.length > 0) parts.push(tail);
  parts.push(`[output cut: showing ${head.length + tail.length} of ${content.length} characters; the full result is kept in the session store]`);
  return { content: parts.join('\n\n'), cut: true };
}

/**
 * The per-result caps that keep `sizes` together within `max` (water-filling): the largest are
 * lowered to one common cap, as little as needed; a size within the cap keeps its size. Returns
 * `sizes` unchanged when their sum is within `max`. `max` below 0 counts as 0.
 */
export function messageCaps(sizes: readonly number[], max: number): number[] {
  const limit = Math.max(0, Math.floor(Number.isFinite(max) ? max : 0));
  const clean = sizes.map((s) => Math.max(0, Math.floor(Number.isFinite(s) ? s : 0)));
  const total = (cap: number) => clean.reduce((sum, s) => sum + Math.min(s, cap), 0);
  if (total(Number.POSITIVE_INFINITY) <= limit) return clean;
  let low = 0;
  let high = Math.max(0, ...clean);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (total(mid) <= limit) low = mid;
    else high = mid - 1;
  }
  return clean.map((s) => Math.min(s, low));
}

/** One result of a batch before its budget: the raw content, and the tool's budget (null: exempt). */
export interface RawResult {
  result: ToolResultBlock;
  budget: number | null;
}

/** One result of a batch after its budget: what the model sees, and the whole when it was cut. */
export interface BudgetedResult {
  result: ToolResultBlock;
  fullContent?: string;
}

/**
 * Applies the tool-result budget to the results of one batch of a user message: each is cut to
 * its tool's budget, then, when together they exceed `messageRemaining` characters, the largest
 * are cut further ({@link messageCaps}; exempt results are never cut but count against the
 * aggregate). A cut result carries its whole as `fullContent`. Order is kept.
 */
export function budgetResults(raw: readonly RawResult[], messageRemaining: number): BudgetedResult[] {
  const own = raw.map((r) => (r.budget === null ? r.result.content.length : Math.min(r.result.content.length, Math.max(0, r.budget))));
  const exempt = raw.reduce((sum, r, i) => sum + (r.budget === null ? own[i]! : 0), 0);
  const cuttable = raw.map((r, i) => (r.budget === null ? 0 : own[i]!));
  const caps = messageCaps(cuttable, messageRemaining - exempt);
  return raw.map((r, i) => {
    if (r.budget === null) return { result: r.result };
    const { content, cut } = cutResult(r.result.content, caps[i]!, r.result.tool_use_id);
    return cut ? { result: { ...r.result, content }, fullContent: r.result.content } : { result: r.result };
  });
}
