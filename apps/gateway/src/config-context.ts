import { DEFAULT_COUNT_MARGIN, duration } from '@switchboard/core';
import { z } from 'zod';

/** `context.countTokens`: exact token counts (`POST /v1/messages/count_tokens`) near the shapers' thresholds. */
const countTokensSchema = z
  .strictObject({
    /** Ask for the exact count when an estimate is near a threshold; false: always the estimate. */
    enabled: z.boolean().default(true),
    /** The estimate is checked when within `threshold × (1 ± margin)`. */
    margin: z.number().min(0).max(1).default(DEFAULT_COUNT_MARGIN),
    /** How long one count may take before the estimate is used instead. */
    timeout: duration.refine((ms) => ms >= 100, 'must be at least 100ms').default(5_000),
  })
  .prefault({});

/** `context.toolResults`: the tool-result budget (docs/context.md, "Tool-result budget"). */
const toolResultsSchema = z
  .strictObject({
    /** A tool's result budget in characters when it declares none (MCP tools included); absent: `limits.toolResultMaxChars`. */
    maxChars: z.number().int().min(100).max(10_000_000).optional(),
    /** The results of one user message together; past it the largest are cut further. */
    maxMessageChars: z.number().int().min(100).max(100_000_000).default(200_000),
  })
  .prefault({});

/** `context.microcompact`: sticky placeholders for old tool results (docs/context.md, "Microcompact"). */
const microcompactSchema = z
  .strictObject({
    /** Fraction of W = contextWindow − outputReserve past which old results are cleared. */
    threshold: z.number().gt(0).max(1).default(0.5),
    /** The last K turns whose tool results stay whole. */
    keepTurns: z.number().int().min(1).max(1000).default(3),
    /** The least a cut must free, as a fraction of W: a smaller one would break the prompt cache for little. */
    minGain: z.number().min(0).lt(1).default(0.1),
  })
  .prefault({});

/**
 * `context.compaction`: auto, reactive and manual compaction (docs/context.md, "Compaction").
 * `threshold` is a fraction of `W = contextWindow − outputReserve`; `model` names an entry of
 * `models` (default: the primary model).
 */
export const compactionSchema = z
  .strictObject({
    /** Auto-compact past the threshold (false: only reactive and `/compact`). */
    auto: z.boolean().default(true),
    threshold: z.number().gt(0).max(0.95).default(0.65),
    /** Turns kept after the cut (fewer when they alone are too big). */
    keepTurns: z.number().int().min(1).max(100).default(2),
    model: z.string().min(1).optional(),
    timeout: duration.refine((ms) => ms >= 1_000, 'must be at least 1s').default(120_000),
    maxReactivePerHour: z.number().int().min(0).max(1_000).default(3),
    /** The summary's `max_tokens`. */
    summaryMaxTokens: z.number().int().min(256).max(64_000).default(4_000),
  })
  .prefault({});

/**
 * `context`: how the gateway keeps each request inside the model's window (docs/context.md).
 * Every part has its own key below; thresholds are fractions of `W = contextWindow − outputReserve`
 * of the model in `models.<name>`.
 */
export const contextSchema = z
  .strictObject({
    countTokens: countTokensSchema,
    toolResults: toolResultsSchema,
    microcompact: microcompactSchema,
    compaction: compactionSchema,
  })
  .prefault({});

/** The `context` section as parsed. */
export type ContextConfig = z.output<typeof contextSchema>;

/** The resolved tool-result budget: `context.toolResults`, its default per-tool budget from `limits.toolResultMaxChars`. */
export function toolResultBudgets(context: ContextConfig, limits: { toolResultMaxChars: number }): { maxChars: number; maxMessageChars: number } {
  return { maxChars: context.toolResults.maxChars ?? limits.toolResultMaxChars, maxMessageChars: context.toolResults.maxMessageChars };
}
