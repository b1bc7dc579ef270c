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

/**
 * `context`: how the gateway keeps each request inside the model's window (docs/context.md).
 * Every part has its own key below; thresholds are fractions of `W = contextWindow − outputReserve`
 * of the model in `models.<name>`.
 */
export const contextSchema = z
  .strictObject({
    countTokens: countTokensSchema,
  })
  .prefault({});

/** The `context` section as parsed. */
export type ContextConfig = z.output<typeof contextSchema>;
