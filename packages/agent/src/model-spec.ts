/**
 * What the gateway knows about one model: its limits and its prices. Resolved once at start-up
 * (the gateway's `models.<name>` config over the defaults below) and handed to the engine as a
 * {@link ModelSpecLookup}; nothing here reads config.
 */

/** Prices in USD per million tokens. */
export interface ModelPrice {
  /** Uncached input tokens. */
  input: number;
  /** Output tokens. */
  output: number;
  /** Input tokens read from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the cache with the 5-minute TTL. */
  cacheWrite5m: number;
  /** Input tokens written to the cache with the 1-hour TTL. */
  cacheWrite1h: number;
}

/** The limits and prices of one model. */
export interface ModelSpec {
  /** The model name, as sent to the API. */
  name: string;
  /** Tokens the model accepts in one request (input and output together). */
  contextWindow: number;
  /** Tokens of the window kept free for the answer: shapers work on `contextWindow − outputReserve`. */
  outputReserve: number;
  /** The most output tokens one call may ask for (`max_tokens`). */
  maxOutputTokens: number;
  /** The shortest prefix the API caches; a shorter one silently caches nothing. */
  minCacheTokens: number;
  price: ModelPrice;
}

/** The spec of a model by name; total: an unknown name gets the generic default. The gateway's lookup returns one frozen object per name. */
export type ModelSpecLookup = (name: string) => ModelSpec;

/** A model's spec without its name, as the defaults table holds it. */
export type ModelLimits = Omit<ModelSpec, 'name'>;

const price = (input: number, output: number): ModelPrice => ({
  input,
  output,
  // Anthropic's published multipliers: a cache read costs 0.1×, a 5-minute write 1.25×, a 1-hour write 2× the input price.
  cacheRead: round(input * 0.1),
  cacheWrite5m: round(input * 1.25),
  cacheWrite1h: round(input * 2),
});

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

const limits = (maxOutputTokens: number, minCacheTokens: number, p: ModelPrice): ModelLimits => ({
  contextWindow: 200_000,
  outputReserve: 20_000,
  maxOutputTokens,
  minCacheTokens,
  price: p,
});

/**
 * Defaults for known Anthropic models, from Anthropic's published limits and prices (late 2025).
 * They change: an operator checks them and overrides any in `models.<name>`. A dated snapshot id
 * (`claude-sonnet-4-5-20250929`) gets the entry of its base name.
 */
export const KNOWN_MODEL_LIMITS: ReadonlyMap<string, ModelLimits> = new Map([
  ['claude-opus-4-5', limits(64_000, 4096, price(5, 25))],
  ['claude-opus-4-1', limits(32_000, 1024, price(15, 75))],
  ['claude-opus-4', limits(32_000, 1024, price(15, 75))],
  ['claude-sonnet-4-5', limits(64_000, 1024, price(3, 15))],
  ['claude-sonnet-4', limits(64_000, 1024, price(3, 15))],
  ['claude-3-7-sonnet', limits(64_000, 1024, price(3, 15))],
  ['claude-haiku-4-5', limits(64_000, 4096, price(1, 5))],
  ['claude-3-5-haiku', limits(8192, 2048, price(0.8, 4))],
  // Claude 3 Haiku's published cache prices are rounded, not the multipliers.
  ['claude-3-haiku', limits(4096, 2048, { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite5m: 0.3, cacheWrite1h: 0.5 })],
]);

/**
 * The default for a name the table does not know: a 200k window, no output cap below the
 * config's own `model.maxTokens` limit (128,000), a 1,024-token cache minimum and Sonnet-class
 * prices (so a cost is never silently zero).
 */
export const GENERIC_MODEL_LIMITS: ModelLimits = limits(128_000, 1024, price(3, 15));

/** The known table's entry for a name or its dated snapshot id (`<base>-YYYYMMDD`, `<base>-latest`); undefined for an unknown name. */
export function knownModelLimits(name: string): ModelLimits | undefined {
  const exact = KNOWN_MODEL_LIMITS.get(name);
  if (exact) return exact;
  const base = /^(.+)-(\d{8}|latest)$/.exec(name)?.[1];
  return base === undefined ? undefined : KNOWN_MODEL_LIMITS.get(base);
}

/** The default spec of a name: the known table's entry, else the generic default. */
export function defaultModelSpec(name: string): ModelSpec {
  return { name, ...structuredClone(knownModelLimits(name) ?? GENERIC_MODEL_LIMITS) };
}
