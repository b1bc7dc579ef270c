/**
 * The prompt-caching rules of the Messages API as the fake enforces them: where `cache_control`
 * may go, its shape, at most 4 breakpoints per request (the top-level automatic one included),
 * and longer TTLs before shorter ones in `tools` → `system` → `messages` order.
 */
import type { ValidationFailure } from './anthropic-validate.js';

/** The most `cache_control` breakpoints one request may carry. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** A breakpoint's TTL: `5m` (the default) or `1h`. */
export type CacheTtl = '5m' | '1h';

/** One `cache_control` found in a request, in prefix order. */
export interface CacheMark {
  /** The field path of the block, e.g. `messages.3.content.0` (`cache_control` for the top-level one). */
  where: string;
  ttl: CacheTtl;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The TTL of a `cache_control` value, or the failure that names what is wrong with it. */
function ttlOf(value: unknown, where: string): CacheTtl | ValidationFailure {
  if (!isObject(value)) return { message: `${where}.cache_control: Input should be a valid dictionary` };
  if (value.type !== 'ephemeral') return { message: `${where}.cache_control.type: Input should be 'ephemeral'` };
  for (const key of Object.keys(value)) {
    if (key !== 'type' && key !== 'ttl') return { message: `${where}.cache_control.${key}: Extra inputs are not permitted` };
  }
  if (value.ttl === undefined) return '5m';
  if (value.ttl !== '5m' && value.ttl !== '1h') return { message: `${where}.cache_control.ttl: Input should be '5m' or '1h'` };
  return value.ttl;
}

/** Collects the marks of a block list (and of tool_result contents inside it). */
function collect(blocks: unknown, where: string, marks: CacheMark[]): ValidationFailure | undefined {
  if (!Array.isArray(blocks)) return undefined;
  for (let j = 0; j < blocks.length; j++) {
    const b: unknown = blocks[j];
    if (!isObject(b)) continue;
    const at = `${where}.${j}`;
    if (b.type === 'tool_result') {
      const nested = collect(b.content, `${at}.content`, marks);
      if (nested) return nested;
    }
    if (!Object.hasOwn(b, 'cache_control')) continue;
    if (b.type === 'thinking' || b.type === 'redacted_thinking') return { message: `${at}.${b.type}.cache_control: Extra inputs are not permitted` };
    if (b.type === 'text' && (typeof b.text !== 'string' || b.text.trim() === '')) {
      return { message: `${at}: cache_control cannot be set for empty text blocks` };
    }
    const ttl = ttlOf(b.cache_control, at);
    if (typeof ttl !== 'string') return ttl;
    marks.push({ where: at, ttl });
  }
  return undefined;
}

/** The field path of the last content block of the last message, if it is a block list. */
function lastBlockPath(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const m: unknown = messages[messages.length - 1];
  if (!isObject(m) || !Array.isArray(m.content) || m.content.length === 0) return undefined;
  return `messages.${messages.length - 1}.content.${m.content.length - 1}`;
}

/**
 * The request's breakpoints in prefix order (`tools`, `system`, `messages`, then the top-level
 * automatic one), or the first failure of the caching rules. Assumes the rest of the body was
 * validated (messages and tools are lists).
 */
export function cacheMarks(body: Record<string, unknown>): CacheMark[] | ValidationFailure {
  const marks: CacheMark[] = [];
  const bad =
    collect(body.tools, 'tools', marks) ??
    (Array.isArray(body.system) ? collect(body.system, 'system', marks) : undefined) ??
    (Array.isArray(body.messages)
      ? body.messages.reduce<ValidationFailure | undefined>(
          (failure, m: unknown, i) => failure ?? (isObject(m) ? collect(m.content, `messages.${i}.content`, marks) : undefined),
          undefined,
        )
      : undefined);
  if (bad) return bad;
  if (Object.hasOwn(body, 'cache_control')) {
    const ttl = ttlOf(body.cache_control, 'cache_control');
    if (typeof ttl !== 'string') return { message: ttl.message.replace(/^cache_control\.cache_control/, 'cache_control') };
    const last = marks.at(-1);
    const lastBlock = lastBlockPath(body.messages);
    if (last && last.where === lastBlock) {
      // The automatic breakpoint lands on the last block, which already has one: same TTL is a no-op.
      if (last.ttl !== ttl) return { message: `cache_control: the last block already has a cache_control with a different ttl ('${last.ttl}')` };
    } else {
      marks.push({ where: 'cache_control', ttl });
    }
  }
  return marks;
}

/** Checks the caching rules of a `POST /v1/messages` body: shapes, the breakpoint count, TTL order. */
export function checkCacheControl(body: Record<string, unknown>): ValidationFailure | undefined {
  const marks = cacheMarks(body);
  if (!Array.isArray(marks)) return marks;
  if (marks.length > MAX_CACHE_BREAKPOINTS) {
    return { message: `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length}.` };
  }
  let sawShort = false;
  for (const mark of marks) {
    if (mark.ttl === '5m') sawShort = true;
    else if (sawShort) {
      return {
        message:
          `${mark.where}.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. ` +
          "Note that blocks are processed in the following order: 'tools', 'system', 'messages'.",
      };
    }
  }
  return undefined;
}
