import type Anthropic from '@anthropic-ai/sdk';
import type { Message } from './messages.js';
import type { ModelRequest, ToolSpec } from './model.js';

/** The `cache_control` value the client sets: the default 5-minute ephemeral cache. */
export const CACHE_BREAKPOINT = Object.freeze({ type: 'ephemeral' as const });

/** The streaming Messages API body the client sends. */
export type MessagesRequestBody = Anthropic.MessageCreateParamsStreaming;

/** Tools in name order (a stable copy): the prefix stays byte-identical however the turn's tool list was assembled. */
export function sortedTools(tools: readonly ToolSpec[]): ToolSpec[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whether a block may carry `cache_control` (not an empty text block). */
function cacheable(block: Anthropic.ContentBlockParam): boolean {
  return block.type !== 'text' || block.text.trim() !== '';
}

/** The messages with a breakpoint on the last cacheable block of the last message (copies; the input is not changed). */
function withRollingBreakpoint(messages: readonly Message[]): Anthropic.MessageParam[] {
  const out = messages.map((m) => ({ role: m.role, content: [...m.content] }) as Anthropic.MessageParam);
  const last = out.at(-1);
  if (!last || !Array.isArray(last.content)) return out;
  for (let j = last.content.length - 1; j >= 0; j--) {
    const block = last.content[j]!;
    if (!cacheable(block)) continue;
    last.content[j] = { ...block, cache_control: CACHE_BREAKPOINT } as Anthropic.ContentBlockParam;
    break;
  }
  return out;
}

/**
 * The Messages API body of one streamed call, with prompt-caching breakpoints (at most three of
 * the API's four): one at the end of the stable prefix — the last system block, or the last tool
 * when there is no system prompt —, one at the end of the part everyone shares (the first system
 * block marked `cacheBreakpoint`, when a later one follows) and a rolling one on the last block
 * of the last message, so the
 * next call reads everything this one sent. Tools are sorted by name, so nothing per call varies
 * inside the prefix; the request's own arrays are never modified.
 */
export function buildMessagesRequest(req: ModelRequest): MessagesRequestBody {
  const tools: Anthropic.Tool[] = sortedTools(req.tools).map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.input_schema as Anthropic.Tool.InputSchema,
  }));
  const system: Anthropic.TextBlockParam[] = req.system.map((b) => ({ type: 'text', text: b.text }));
  const lastSystem = system.findLastIndex((b) => b.text.trim() !== '');
  // The end of the prefix everyone shares (the operator's layers) gets its own breakpoint.
  const shared = req.system.findIndex((b) => b.cacheBreakpoint === true && b.text.trim() !== '');
  if (shared >= 0 && shared < lastSystem) system[shared] = { ...system[shared]!, cache_control: CACHE_BREAKPOINT };
  if (lastSystem >= 0) system[lastSystem] = { ...system[lastSystem]!, cache_control: CACHE_BREAKPOINT };
  else if (tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1]!, cache_control: CACHE_BREAKPOINT };
  return {
    model: req.model,
    max_tokens: req.maxTokens,
    system,
    messages: withRollingBreakpoint(req.messages),
    ...(tools.length > 0 ? { tools } : {}),
    stream: true,
  };
}
