import { z } from 'zod';

/**
 * The OpenAI chat-completions wire format as this channel speaks it (docs/openai.md): the request
 * body it reads, and the objects and errors it answers with. Fields the gateway does not use
 * (`temperature`, `tools`, `response_format`, …) are accepted and ignored; they are not validated.
 */

const textPart = z.object({ type: z.literal('text'), text: z.string().max(10_000_000) });
/** Any other content part (images, audio, files): recognised so that the refusal can name it. */
const otherPart = z.object({ type: z.string().max(64) });
const content = z.union([z.string().max(10_000_000), z.array(z.union([textPart, otherPart])).max(1000), z.null()]);

const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: content.optional(),
  name: z.string().max(256).optional(),
});

/** The body of `POST /v1/chat/completions` (unknown fields are dropped, not refused). */
export const chatRequestSchema = z.object({
  model: z.string().min(1).max(128),
  messages: z.array(message).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.literal(1).nullish(),
});

/** A request body as parsed. */
export type ChatRequest = z.output<typeof chatRequestSchema>;

/** What the gateway takes from a request: the agent it addresses and the trailing user message's text. */
export interface ChatTurnRequest {
  agentId: string;
  text: string;
  stream: boolean;
  includeUsage: boolean;
}

/** An OpenAI-style error: the HTTP status and the `{ error: { message, type, param, code } }` body. */
export interface ApiError {
  status: number;
  message: string;
  type: string;
  code: string;
  param?: string;
  headers?: Record<string, string>;
}

/** `messages.2.content` → `messages[2].content` (how OpenAI names a parameter). */
export function paramName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '(body)';
}

const invalid = (message: string, param: string, code = 'invalid_value'): ApiError => ({
  status: 400,
  type: 'invalid_request_error',
  code,
  param,
  message,
});

/**
 * Parses a request body (already JSON-decoded) into the turn it asks for. Total: any value gives
 * either a request or a 400 naming the field. Only the trailing message is taken (the session on
 * the server is the history); it must be a `user` message with text.
 */
export function parseChatRequest(body: unknown): { ok: true; request: ChatTurnRequest } | { ok: false; error: ApiError } {
  const r = chatRequestSchema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const param = paramName(issue.path);
    return { ok: false, error: invalid(`${param}: ${issue.message}`, param, issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value') };
  }
  const req = r.data;
  const last = req.messages.length - 1;
  const trailing = req.messages[last]!;
  if (trailing.role !== 'user') {
    return {
      ok: false,
      error: invalid(
        `messages[${last}].role: the last message must be a user message (the session on the server holds the history; only the last message is taken)`,
        `messages[${last}].role`,
      ),
    };
  }
  let text: string;
  const c = trailing.content;
  if (typeof c === 'string') text = c;
  else if (Array.isArray(c)) {
    const parts: string[] = [];
    for (const [i, part] of c.entries()) {
      if (part.type !== 'text' || !('text' in part)) {
        return {
          ok: false,
          error: invalid(`messages[${last}].content[${i}].type: only text parts are supported, not "${part.type}"`, `messages[${last}].content[${i}].type`),
        };
      }
      parts.push(part.text);
    }
    text = parts.join('\n');
  } else text = '';
  if (text.trim() === '') return { ok: false, error: invalid(`messages[${last}].content: the last user message has no text`, `messages[${last}].content`) };
  return { ok: true, request: { agentId: req.model, text, stream: req.stream === true, includeUsage: req.stream_options?.include_usage === true } };
}

/** The JSON body of an error answer. */
export function errorBody(e: Pick<ApiError, 'message' | 'type' | 'code' | 'param'>): {
  error: { message: string; type: string; param: string | null; code: string };
} {
  return { error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code } };
}

/** Token counts in OpenAI's names. */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Switchboard's own fields on a completion (clients ignore unknown fields). */
export interface SwitchboardFields {
  turn_id: string;
  /** Why the turn ended (`completed`, `steered`, `max_turns`, …). */
  reason: string;
  /** Gateway notices given during the turn (e.g. a budget warning). */
  notices?: string[];
}

/** A `chat.completion` object. */
export function completionObject(o: {
  id: string;
  created: number;
  model: string;
  text: string;
  finishReason: 'stop' | 'length';
  usage?: CompletionUsage;
  switchboard: SwitchboardFields;
}) {
  return {
    id: o.id,
    object: 'chat.completion' as const,
    created: o.created,
    model: o.model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: o.text, refusal: null }, finish_reason: o.finishReason, logprobs: null }],
    ...(o.usage ? { usage: o.usage } : {}),
    switchboard: o.switchboard,
  };
}

/** A `chat.completion.chunk` object with one choice (or none: the usage chunk). */
export function chunkObject(o: {
  id: string;
  created: number;
  model: string;
  delta?: { role?: 'assistant'; content?: string };
  finishReason?: 'stop' | 'length' | null;
  usage?: CompletionUsage | null;
}) {
  return {
    id: o.id,
    object: 'chat.completion.chunk' as const,
    created: o.created,
    model: o.model,
    choices: o.delta ? [{ index: 0, delta: o.delta, finish_reason: o.finishReason ?? null, logprobs: null }] : [],
    ...(o.usage !== undefined ? { usage: o.usage } : {}),
  };
}

/** One SSE event carrying `data` as one line of JSON. */
export const sseData = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

/** The last SSE event of a stream. */
export const SSE_DONE = 'data: [DONE]\n\n';
