import type { WireBlock, WireMessage } from './anthropic-wire.js';

/** Characters the fake counts as one output token (as in `estimateTokens`). */
const CHARS_PER_TOKEN = 4;

/** A reply cut at `max_tokens`: the message as the non-streaming body, and the partial input JSON a stream sends per block index. */
export interface MaxTokensCut {
  message: WireMessage;
  /** Block index → the partial `input_json_delta` text of a tool_use cut mid-input. */
  partialJson: ReadonlyMap<number, string>;
}

/**
 * Cuts `message` where the API would stop at `maxTokens`: content blocks are charged in order
 * (a text block its text, a tool_use block its input JSON) against `maxTokens × 4` characters;
 * the block that overruns is shortened (a tool_use keeps `input: {}` and its partial JSON in
 * `partialJson`), later blocks are dropped, stop_reason becomes `max_tokens` and `output_tokens`
 * `maxTokens`. A message that fits is returned unchanged (and `partialJson` is empty).
 */
export function cutAtMaxTokens(message: WireMessage, maxTokens: number): MaxTokensCut {
  let left = Math.max(0, Math.floor(maxTokens)) * CHARS_PER_TOKEN;
  const content: WireBlock[] = [];
  const partialJson = new Map<number, string>();
  for (const block of message.content) {
    const chars = Array.from(block.type === 'text' ? block.text : JSON.stringify(block.input));
    if (chars.length <= left) {
      content.push(block);
      left -= chars.length;
      continue;
    }
    const kept = chars.slice(0, left).join('');
    if (block.type === 'text') {
      content.push({ type: 'text', text: kept });
    } else {
      partialJson.set(content.length, kept);
      content.push({ ...block, input: {} });
    }
    return { message: { ...message, content, stop_reason: 'max_tokens', usage: { ...message.usage, output_tokens: maxTokens } }, partialJson };
  }
  return { message, partialJson };
}
