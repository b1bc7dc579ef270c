import { SUMMARY_REQUEST_MARKER } from '@switchboard/agent';
import type { RecordedBody, RecordedRequest, ResponseHandler, ScriptedResponse } from './fake-anthropic-types.js';
import { requestTokens } from './fake-prompt-cache.js';

/** Whether a recorded request is a compaction's summary call (its first user message opens with the summary instruction). */
export function isSummaryRequest(req: RecordedRequest): boolean {
  const first = req.body.messages?.[0];
  if (first?.role !== 'user') return false;
  const text = typeof first.content === 'string' ? first.content : first.content.find((b) => b.type === 'text')?.text;
  return typeof text === 'string' && text.startsWith(SUMMARY_REQUEST_MARKER);
}

/**
 * A handler (for `fake.setHandler`) that answers summary calls with `answer` and leaves every other
 * request to the queue and the default: script a summary (`{ text }`) or its failure (`{ error }`).
 */
export function summaryHandler(answer: ScriptedResponse | ((req: RecordedRequest) => ScriptedResponse), others?: ResponseHandler): ResponseHandler {
  return (req) => {
    if (isSummaryRequest(req)) return typeof answer === 'function' ? answer(req) : answer;
    return others?.(req);
  };
}

/**
 * The API's refusal of a request whose input tokens (`requestTokens`, the count the fake's usage and
 * count_tokens report) plus `max_tokens` exceed `contextWindow`: the 400 `invalid_request_error`
 * "prompt is too long: N tokens > M maximum". Undefined when it fits.
 */
export function contextWindowRefusal(body: RecordedBody, contextWindow: number | undefined): string | undefined {
  if (contextWindow === undefined) return undefined;
  const input = requestTokens(body as Record<string, unknown>);
  const total = input + (typeof body.max_tokens === 'number' ? body.max_tokens : 0);
  return total > contextWindow ? `prompt is too long: ${total} tokens > ${contextWindow} maximum` : undefined;
}
