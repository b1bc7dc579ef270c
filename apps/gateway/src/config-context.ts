import { z } from 'zod';

/**
 * `context`: how the gateway keeps each request inside the model's window (docs/context.md).
 * Every part has its own key below; thresholds are fractions of `W = contextWindow − outputReserve`
 * of the model in `models.<name>`.
 */
export const contextSchema = z.strictObject({}).prefault({});

/** The `context` section as parsed. */
export type ContextConfig = z.output<typeof contextSchema>;
