import { channelAccountShape, dmPolicySchema, duration } from '@switchboard/core';
import { z } from 'zod';

/**
 * One OpenAI-compatible account: `channels.openai.accounts.<id>` (`default` serves `/v1/*`, any
 * other `/channels/openai/<id>/v1/*`), durations in milliseconds once parsed. Clients
 * authenticate with client tokens, so `dmPolicy` defaults to `allowlist` (as on WebSocket) and
 * there are no rooms or pairing.
 */
export const openaiAccountSchema = z.strictObject({
  dmPolicy: dmPolicySchema.default('allowlist'),
  allowFrom: z.array(z.string()).default([]),
  required: channelAccountShape.required,
  rateLimit: channelAccountShape.rateLimit,
  permissionMode: channelAccountShape.permissionMode,
  /**
   * An approval asked during a request waits at most this long, then becomes a denial the model is
   * told about (the client holds its HTTP request open meanwhile).
   */
  approvalWait: duration.default(60_000),
  /** A streaming response sends a `: ping` comment after this much silence while its turn runs. */
  pingInterval: duration.refine((ms) => ms >= 100, 'must be at least 100ms').default(15_000),
  /**
   * Requests without an `Idempotency-Key` are the same request when token, session, agent and
   * message match within this window (the official client retries a failed request twice).
   */
  dedupeWindow: duration.default(600_000),
  /** Largest accepted request body, in bytes (larger → 413). */
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
});

/** One OpenAI-compatible account as the adapter gets it: the parsed config (durations in milliseconds). */
export type OpenaiAccountConfig = z.output<typeof openaiAccountSchema>;
