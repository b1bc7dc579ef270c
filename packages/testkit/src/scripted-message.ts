import { estimateTokens, type WireBlock, type WireMessage } from './anthropic-wire.js';
import type { RecordedRequest, ScriptedResponse } from './fake-anthropic-types.js';
import { type CacheUsage, requestTokens } from './fake-prompt-cache.js';

/** The default answer: text `echo: <text of the last user text block>`. */
export function echoResponse(req: RecordedRequest): ScriptedResponse {
  const messages = req.body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return { text: `echo: ${m.content}` };
    const texts = m.content.filter((b) => b.type === 'text');
    const last = texts[texts.length - 1];
    if (last) return { text: `echo: ${String(last.text)}` };
  }
  return { text: 'echo: ' };
}

/** Id sources and the fallback for content-less responses, supplied by the fake. */
export interface MessageIds {
  messageId(): string;
  toolUseId(): string;
  /** Supplies the content when the scripted response has neither `text` nor `toolUses`. */
  fallback(req: RecordedRequest): ScriptedResponse;
}

/**
 * The assistant Message a scripted response stands for: a text block (omitted when empty and
 * tool calls follow), then one tool_use block per tool call; stop_reason `tool_use` when there
 * are tool calls, else `end_turn`, unless `stopReason` says otherwise; estimated usage, with the
 * cache reads and writes of `cache` (taken out of `input_tokens`; the three add up to `requestTokens`); `r.usage` overrides any counter.
 */
export function buildScriptedMessage(rec: RecordedRequest, r: ScriptedResponse, ids: MessageIds, cache?: CacheUsage): WireMessage {
  let { text, toolUses } = r;
  if (text === undefined && toolUses === undefined) {
    const d = ids.fallback(rec);
    text = d.text ?? (d.toolUses ? undefined : 'ok');
    toolUses = d.toolUses;
  }
  const content: WireBlock[] = [];
  if (text !== undefined && !(text === '' && toolUses && toolUses.length > 0)) content.push({ type: 'text', text });
  for (const t of toolUses ?? []) content.push({ type: 'tool_use', id: t.id ?? ids.toolUseId(), name: t.name, input: t.input });
  // The three input counters add up to the request's tokens (what count_tokens answers for it).
  const total = requestTokens(rec.body);
  const read = cache?.read ?? 0;
  const write5m = cache?.write5m ?? 0;
  const write1h = cache?.write1h ?? 0;
  const usage = {
    input_tokens: Math.max(0, total - read - write5m - write1h),
    output_tokens: estimateTokens(content),
    cache_creation_input_tokens: write5m + write1h,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
    ...(r.usage ?? {}),
  };
  return {
    id: ids.messageId(),
    type: 'message',
    role: 'assistant',
    model: rec.body.model ?? 'claude-test',
    content,
    stop_reason: r.stopReason ?? (toolUses && toolUses.length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage,
  };
}
