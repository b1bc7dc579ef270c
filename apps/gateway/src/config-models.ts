import { defaultModelSpec, type ModelSpec, type ModelSpecLookup, knownModelLimits } from '@switchboard/agent';
import { z } from 'zod';

/** A model name as the API takes it (`claude-sonnet-4-5`, `claude-sonnet-4-5-20250929`, a Bedrock id with `.` and `:`). */
const modelName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/, 'a model name such as claude-sonnet-4-5');

const usdPerMillion = z.number().min(0).max(100_000);

/** `models.<name>`: overrides of that model's defaults (every key optional; see {@link resolveModelLimits}). */
const modelEntry = z.strictObject({
  contextWindow: z.number().int().min(1024).max(100_000_000).optional(),
  outputReserve: z.number().int().min(0).max(100_000_000).optional(),
  maxOutputTokens: z.number().int().min(1).max(10_000_000).optional(),
  minCacheTokens: z.number().int().min(0).max(100_000_000).optional(),
  /** USD per million tokens. */
  price: z
    .strictObject({
      input: usdPerMillion.optional(),
      output: usdPerMillion.optional(),
      cacheRead: usdPerMillion.optional(),
      cacheWrite5m: usdPerMillion.optional(),
      cacheWrite1h: usdPerMillion.optional(),
    })
    .optional(),
});

/** One `models.<name>` entry as written in the config. */
export type ModelEntry = z.output<typeof modelEntry>;

/** Where a model's effective values came from: its `models.<name>` entry, the known table, or the generic default. */
export type ModelSource = 'config' | 'known' | 'generic';

/** A model's effective limits: its entry's keys over the known table's (or the generic) defaults. */
export function resolveModelLimits(name: string, entry: ModelEntry | undefined): { spec: ModelSpec; source: ModelSource } {
  const spec = defaultModelSpec(name);
  const source = knownModelLimits(name) ? 'known' : 'generic';
  if (!entry) return { spec, source };
  const { price, ...rest } = entry;
  for (const [key, value] of Object.entries(rest) as [keyof typeof rest, number | undefined][]) if (value !== undefined) spec[key] = value;
  for (const [key, value] of Object.entries(price ?? {}) as [keyof ModelSpec['price'], number | undefined][]) if (value !== undefined) spec.price[key] = value;
  return { spec, source: 'config' };
}

/**
 * The `models` config section: `models.<name>` per model, each key optional over the defaults.
 * An entry whose effective `outputReserve` is not below its effective `contextWindow` is refused,
 * naming `models.<name>.outputReserve`.
 */
export const modelsSchema = z.record(modelName, modelEntry).superRefine((models, ctx) => {
  for (const [name, entry] of Object.entries(models)) {
    const { spec } = resolveModelLimits(name, entry);
    if (spec.outputReserve >= spec.contextWindow) {
      ctx.addIssue({
        code: 'custom',
        path: [name, 'outputReserve'],
        message: `must be less than contextWindow (${spec.outputReserve} ≥ ${spec.contextWindow}${entry.contextWindow === undefined ? ', the default' : ''})`,
      });
    }
  }
});

/** A model's effective values as the control API shows them. */
export interface ResolvedModel extends ModelSpec {
  source: ModelSource;
  /** `primary` for `model.name`, `fallback` for `model.fallback`; empty for an entry only listed under `models`. */
  roles: ('primary' | 'fallback')[];
}

/** Every model the gateway knows by name, resolved once: the lookup the engine gets, and the list operators see. */
export interface ModelSpecs {
  /** Total: a configured entry, else the known table, else the generic default. */
  lookup: ModelSpecLookup;
  /** `model.name`, `model.fallback` and every `models.<name>` entry, primary first. */
  list: readonly ResolvedModel[];
}

/** Resolves `models` with the configured primary and fallback names. */
export function resolveModelSpecs(models: Readonly<Record<string, ModelEntry>>, primary: string, fallback: string | undefined): ModelSpecs {
  const entryOf = (name: string) => (Object.hasOwn(models, name) ? models[name] : undefined);
  const cache = new Map<string, { spec: ModelSpec; source: ModelSource }>();
  const resolved = (name: string) => {
    let hit = cache.get(name);
    if (!hit) {
      hit = resolveModelLimits(name, entryOf(name));
      deepFreeze(hit.spec);
      cache.set(name, hit);
    }
    return hit;
  };
  const names = [...new Set([primary, ...(fallback ? [fallback] : []), ...Object.keys(models)])];
  const list = names.map((name): ResolvedModel => {
    const { spec, source } = resolved(name);
    const roles: ResolvedModel['roles'] = [];
    if (name === primary) roles.push('primary');
    if (name === fallback) roles.push('fallback');
    return { ...spec, price: { ...spec.price }, source, roles };
  });
  return { lookup: (name) => resolved(name).spec, list };
}

/** What `model.maxTokens` becomes under the configured models' `maxOutputTokens`. */
export interface MaxTokensCap {
  maxTokens: number;
  /** Set when `model.maxTokens` was lowered: the model whose cap applied. */
  cappedBy?: { model: string; maxOutputTokens: number; configured: number };
}

/**
 * Caps `model.maxTokens` at the smallest `maxOutputTokens` of the primary and fallback models
 * (a request to either must be valid). The caller logs a warning when it was lowered.
 */
export function capMaxTokens(maxTokens: number, lookup: ModelSpecLookup, primary: string, fallback: string | undefined): MaxTokensCap {
  let out: MaxTokensCap = { maxTokens };
  for (const name of fallback ? [primary, fallback] : [primary]) {
    const { maxOutputTokens } = lookup(name);
    if (maxOutputTokens < out.maxTokens) out = { maxTokens: maxOutputTokens, cappedBy: { model: name, maxOutputTokens, configured: maxTokens } };
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
