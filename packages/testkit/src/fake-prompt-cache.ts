/**
 * The fake's prompt cache: it remembers the prefixes earlier requests wrote at their breakpoints
 * (a cumulative hash of the serialized prefix, per model) for their TTL, and tells a request how
 * many of its input tokens were read from the cache and how many were written to it.
 *
 * Rules, as the Messages API documents them:
 * - the prefix is `tools` → `system` → `messages`, one position per tool, system block and
 *   message content block; `cache_control` itself is not part of the hash;
 * - writes happen only at breakpoints whose prefix reaches the model's minimum cacheable length
 *   (a shorter one silently caches nothing);
 * - a read walks back at most {@link CACHE_LOOKBACK} positions from each breakpoint (the
 *   breakpoint counts as the first) and takes the longest prefix found;
 * - an entry lives for its TTL (5 minutes or 1 hour) from the start of the request that wrote or
 *   last read it.
 * Tokens are estimated like the rest of the fake: 4 characters of JSON per token (see {@link requestTokens}).
 */
import { createHash } from 'node:crypto';
import { cacheMarks, type CacheTtl } from './anthropic-cache-rules.js';

/** How many positions a read looks back from a breakpoint, the breakpoint included. */
export const CACHE_LOOKBACK = 20;

/** The TTLs in milliseconds. */
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

/**
 * The default minimum cacheable prefix of a model, in tokens: 4,096 for Haiku 4.5 and Opus 4.5
 * (and 4.6), 1,024 for everything else (Sonnet-class, and the tests' `claude-test`).
 */
export function defaultMinCacheTokens(model: string): number {
  return /haiku-4-5|opus-4-[56]/i.test(model) ? 4096 : 1024;
}

/** What a request read from and wrote to the cache, in tokens. */
export interface CacheUsage {
  read: number;
  /** Written with a 5-minute TTL. */
  write5m: number;
  /** Written with a 1-hour TTL. */
  write1h: number;
}

/** One request's cache accounting; `commit` stores its writes (call it only for a successful answer). */
export interface CacheAccount {
  usage: CacheUsage;
  commit(): void;
}

/** Options of {@link PromptCache}. */
export interface PromptCacheOptions {
  /** The minimum cacheable prefix per model, in tokens (default {@link defaultMinCacheTokens}). */
  minTokens?: (model: string) => number;
  /** The clock, in milliseconds (default `Date.now`); tests advance it instead of waiting. */
  now?: () => number;
}

interface Position {
  hash: string;
  /** Tokens of the prefix up to and including this position. */
  tokens: number;
  ttl?: CacheTtl;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A block without its `cache_control` (nor that of the blocks of a tool_result's content). */
function strip(block: unknown): unknown {
  if (!isObject(block)) return block;
  const { cache_control: _ignored, ...rest } = block;
  if (Array.isArray(rest.content)) rest.content = rest.content.map(strip);
  return rest;
}

/** The request's prefix positions with cumulative hashes and token counts, and the TTL of each breakpoint. */
function positions(body: Record<string, unknown>, ttlByPath: ReadonlyMap<string, CacheTtl>): Position[] {
  const out: Position[] = [];
  let hash = createHash('sha256')
    .update(`model:${String(body.model)}`)
    .digest('hex');
  let chars = 0;
  const add = (path: string, key: unknown) => {
    const text = JSON.stringify(key);
    chars += text.length;
    hash = createHash('sha256').update(hash).update('\n').update(text).digest('hex');
    const ttl = ttlByPath.get(path);
    out.push({ hash, tokens: Math.ceil(chars / 4), ...(ttl ? { ttl } : {}) });
  };
  const tools: unknown[] = Array.isArray(body.tools) ? body.tools : [];
  for (const [i, t] of tools.entries()) add(`tools.${i}`, ['tool', strip(t)]);
  if (typeof body.system === 'string' && body.system !== '') add('system', ['system', { type: 'text', text: body.system }]);
  const system: unknown[] = Array.isArray(body.system) ? body.system : [];
  for (const [i, b] of system.entries()) add(`system.${i}`, ['system', strip(b)]);
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    if (!isObject(m)) continue;
    if (typeof m.content === 'string') add(`messages.${i}.content`, ['message', i, m.role, { type: 'text', text: m.content }]);
    else if (Array.isArray(m.content)) {
      for (const [j, b] of (m.content as unknown[]).entries()) add(`messages.${i}.content.${j}`, ['message', i, m.role, strip(b)]);
    }
  }
  // The top-level automatic breakpoint sits on the last block.
  const auto = ttlByPath.get('cache_control');
  const last = out.at(-1);
  if (auto && last && !last.ttl) last.ttl = auto;
  return out;
}

/**
 * Tokens of a request's framing after its last block (the opening of the assistant's turn): no
 * breakpoint covers them, so even a request read whole from the cache has a few `input_tokens`.
 */
export const FRAMING_TOKENS = 3;

/**
 * The input tokens of a Messages or count_tokens body as the fake counts them: its whole prompt
 * (tools → system → messages) measured like the cached prefixes — so a request's cache reads
 * and writes never exceed it — plus {@link FRAMING_TOKENS}, with `cache_control` counting
 * nothing, as at the API. The usage of a Messages request adds up to it (`input_tokens` + cache
 * reads + cache writes), and count_tokens answers it for the same prompt.
 */
export function requestTokens(body: Record<string, unknown>): number {
  return (positions(body, new Map()).at(-1)?.tokens ?? 0) + FRAMING_TOKENS;
}

/** The fake's memory of cached prefixes; see the file comment for the rules. */
export class PromptCache {
  /** Remembered prefixes by hash: when each expires and the TTL a read refreshes it with. */
  private readonly entries = new Map<string, { expires: number; ttlMs: number }>();
  private readonly minTokens: (model: string) => number;
  private readonly now: () => number;

  constructor(opts: PromptCacheOptions = {}) {
    this.minTokens = opts.minTokens ?? defaultMinCacheTokens;
    this.now = opts.now ?? Date.now;
  }

  /** How many prefixes are remembered and not yet expired. */
  get size(): number {
    const now = this.now();
    return [...this.entries.values()].filter((e) => e.expires > now).length;
  }

  /** Accounts one valid request body (its caching rules already checked). */
  account(body: Record<string, unknown>): CacheAccount {
    const marks = cacheMarks(body);
    const ttlByPath = new Map<string, CacheTtl>(Array.isArray(marks) ? marks.map((m) => [m.where, m.ttl]) : []);
    const all = positions(body, ttlByPath);
    const min = this.minTokens(String(body.model));
    const now = this.now();
    const live = (hash: string) => (this.entries.get(hash)?.expires ?? 0) > now;
    const breakpoints = all.map((p, index) => ({ ...p, index })).filter((p) => p.ttl !== undefined && p.tokens >= min);
    let hit = -1;
    for (const bp of breakpoints) {
      for (let q = bp.index; q > bp.index - CACHE_LOOKBACK && q >= 0; q--) {
        if (live(all[q]!.hash)) {
          hit = Math.max(hit, q);
          break;
        }
      }
    }
    const read = hit >= 0 ? all[hit]!.tokens : 0;
    const lastLong = breakpoints.filter((bp) => bp.ttl === '1h').at(-1);
    const last = breakpoints.at(-1);
    const longEnd = lastLong && lastLong.index > hit ? lastLong.tokens : read;
    const write1h = Math.max(0, longEnd - read);
    const write5m = last && last.index > hit ? Math.max(0, last.tokens - Math.max(read, longEnd)) : 0;
    const commit = () => {
      const hitEntry = hit >= 0 ? this.entries.get(all[hit]!.hash) : undefined;
      if (hitEntry) hitEntry.expires = Math.max(hitEntry.expires, now + hitEntry.ttlMs);
      for (const bp of breakpoints) {
        const ttlMs = CACHE_TTL_MS[bp.ttl!];
        const known = this.entries.get(bp.hash);
        this.entries.set(bp.hash, { expires: Math.max(known?.expires ?? 0, now + ttlMs), ttlMs: Math.max(known?.ttlMs ?? 0, ttlMs) });
      }
      const at = this.now();
      for (const [hash, entry] of this.entries) if (entry.expires <= at) this.entries.delete(hash);
    };
    return { usage: { read, write5m, write1h }, commit };
  }
}
