import { boundaryShape, duration, refineBoundary } from '@switchboard/core';
import { z } from 'zod';

/** One webhook account: `channels.webhook.accounts.<id>`, durations in milliseconds once parsed. */
export const webhookAccountSchema = z
  .strictObject({
    ...boundaryShape,
    /** HMAC-SHA256 key for inbound requests (timestamp + body). */
    secret: z.string().min(16).max(512),
    /** Where replies are POSTed (signed the same way). Operator-configured, so private addresses are fine. */
    callbackUrl: z.url(),
    /** Requests whose timestamp is further than this from now are refused (replay window). */
    replayWindow: duration.default(300_000),
    /** Extra attempts for a callback that failed with a 5xx, 408, 429 or a network error (bounded backoff). */
    callbackRetries: z.number().int().min(0).max(10).default(3),
    /** Delay before the first retry; each further retry doubles it (capped at 30 s). */
    callbackRetryDelay: duration.default(1_000),
    /** A callback attempt that has not answered in this long is abandoned (and retried). */
    callbackTimeout: duration.default(10_000),
    /** Largest accepted inbound request body, in bytes (larger → 413). */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(4 * 1024 * 1024)
      .default(256 * 1024),
  })
  .superRefine(refineBoundary);

/** One webhook account as the adapter gets it: the parsed config (durations in milliseconds). */
export type WebhookAccount = z.output<typeof webhookAccountSchema>;
