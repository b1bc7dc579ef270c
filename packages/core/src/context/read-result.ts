import { headOf, READ_RESULT_TOOL, type Tool, type ToolResult } from '@switchboard/agent';
import { z } from 'zod';
import type { Entry, Storage } from '../storage.js';

/** The most characters one `read_result` call returns. */
export const READ_RESULT_MAX_LENGTH = 20_000;
/** What one call returns when it names no length. */
export const READ_RESULT_DEFAULT_LENGTH = 10_000;

const readResultInput = z.strictObject({
  reference: z.string().min(1).max(200).describe('The reference of a stored result: the tool_use id named in its "output cut" or "cleared" note'),
  offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('The first character to return (default 0)'),
  length: z
    .number()
    .int()
    .min(1)
    .max(READ_RESULT_MAX_LENGTH)
    .optional()
    .describe(`How many characters (default ${READ_RESULT_DEFAULT_LENGTH}, at most ${READ_RESULT_MAX_LENGTH})`),
});

/** The input of `read_result`. */
export type ReadResultInput = z.output<typeof readResultInput>;

/** The whole of the result stored for `reference` among a session's entries (the last one wins), or null. */
export function storedResult(entries: readonly Entry[], reference: string): string | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind !== 'tool_result' || typeof entry.payload !== 'object' || entry.payload === null) continue;
    const payload = entry.payload as { result?: unknown; fullContent?: unknown };
    const result =
      Object.hasOwn(payload, 'result') && typeof payload.result === 'object' && payload.result !== null ? (payload.result as Record<string, unknown>) : null;
    if (!result || !Object.hasOwn(result, 'tool_use_id') || result.tool_use_id !== reference) continue;
    if (Object.hasOwn(payload, 'fullContent') && typeof payload.fullContent === 'string') return payload.fullContent;
    return Object.hasOwn(result, 'content') && typeof result.content === 'string' ? result.content : null;
  }
  return null;
}

/**
 * One page of `whole`: `length` characters from `offset`, widened at the start and narrowed at
 * the end so that no surrogate pair is split, with a header naming where the next page starts.
 */
export function resultPage(whole: string, reference: string, offset: number, length: number): string {
  let start = Math.min(Math.max(0, Math.floor(offset)), whole.length);
  const low = whole.charCodeAt(start);
  const high = whole.charCodeAt(start - 1);
  if (start > 0 && low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff) start -= 1;
  let page = headOf(whole.slice(start), Math.max(1, length));
  // A length of 1 at a surrogate pair: the whole pair, so that the next offset moves on.
  if (page.length === 0 && start < whole.length) page = whole.slice(start, start + 2);
  const end = start + page.length;
  const where = end < whole.length ? `next offset ${end}` : 'end of the result';
  return `[read_result ${JSON.stringify(reference)}: characters ${start}–${end} of ${whole.length}; ${where}]\n${page}`;
}

/**
 * `read_result`: pages through a result the tool-result budget cut or microcompact cleared, from
 * the session store (the whole result, `fullContent`). Read-only; it reads only the session of
 * the turn that calls it (`ctx.sessionId`), so a reference from another session is not found.
 * Exempt from the result budget: its length is bounded by its own input schema.
 */
export function createReadResultTool(sessions: Pick<Storage['sessions'], 'load'>): Tool<ReadResultInput> {
  return {
    name: READ_RESULT_TOOL,
    description:
      'Reads part of a stored tool result that was cut or cleared to save context. Give the reference (the tool_use id in the note), ' +
      `an offset and a length (at most ${READ_RESULT_MAX_LENGTH} characters); the answer says where the next page starts.`,
    input: readResultInput,
    readOnly: true,
    concurrencySafe: true,
    resultBudget: 'exempt',
    ruleContent: (input) => input.reference,
    async call(input, ctx): Promise<ToolResult> {
      const whole = storedResult(await sessions.load(ctx.sessionId), input.reference);
      if (whole === null) {
        return { content: `There is no stored result with reference ${JSON.stringify(input.reference)} in this session.`, isError: true };
      }
      return { content: resultPage(whole, input.reference, input.offset ?? 0, input.length ?? READ_RESULT_DEFAULT_LENGTH) };
    },
  };
}
