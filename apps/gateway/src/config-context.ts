import { duration } from '@switchboard/core';
import { z } from 'zod';

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
    compaction: compactionSchema,
  })
  .prefault({});

/** The `context` section as parsed. */
export type ContextConfig = z.output<typeof contextSchema>;
