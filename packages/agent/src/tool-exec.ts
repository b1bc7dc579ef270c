import { z } from 'zod';
import type { ToolResultBlock } from './messages.js';
import type { AnyTool, ToolContext } from './tool.js';
import type { ToolSpec } from './model.js';

const specCache = new WeakMap<AnyTool, ToolSpec>();

/** The JSON Schema the model sees for a tool (computed once per tool object). */
export function toolSpec(tool: AnyTool): ToolSpec {
  const cached = specCache.get(tool);
  if (cached) return cached;
  let schema = tool.inputJsonSchema;
  if (!schema) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
    schema = rest;
  }
  const spec = { name: tool.name, description: tool.description, input_schema: schema };
  specCache.set(tool, spec);
  return spec;
}

/** Formats a zod failure as one line per problem, naming the field. */
export function describeZodError(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(input)'}: ${i.message}`).join('; ');
}

export interface ToolRunOutcome {
  result: ToolResultBlock;
  fullContent?: string;
}

/**
 * Runs one tool call whose permission was already granted. A throw, an abort or a timeout
 * becomes an is_error result; never throws. The result is whole: the tool-result budget is
 * applied to the batch afterwards (`budgetResults`).
 */
export async function runTool(tool: AnyTool, input: unknown, ctx: ToolContext, timeoutMs: number): Promise<ToolRunOutcome> {
  const id = ctx.toolUseId;
  const local = new AbortController();
  const onAbort = () => local.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    local.abort(new Error('tool timeout'));
  }, timeoutMs);
  try {
    const abortPromise = new Promise<never>((_, reject) => {
      local.signal.addEventListener('abort', () => reject(local.signal.reason), { once: true });
    });
    const out = await Promise.race([tool.call(input, { ...ctx, signal: local.signal }), abortPromise]);
    if (typeof out?.content !== 'string') throw new Error('it returned no text content');
    const result: ToolResultBlock = { type: 'tool_result', tool_use_id: id, content: out.content };
    if (out.isError) result.is_error = true;
    return { result };
  } catch (err) {
    let message: string;
    if (timedOut) message = `The tool ${tool.name} did not finish within ${timeoutMs} ms and was stopped.`;
    else if (ctx.signal.aborted) message = `The tool ${tool.name} was stopped because the turn was interrupted.`;
    else message = `The tool ${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`;
    return { result: { type: 'tool_result', tool_use_id: id, content: message, is_error: true } };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}
