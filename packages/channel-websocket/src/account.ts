import { channelAccountShape, dmPolicySchema, duration } from '@switchboard/core';
import { z } from 'zod';

/**
 * One WebSocket account: `channels.websocket.accounts.<id>` (clients connect to `/ws` for
 * `default`, `/ws/<id>` otherwise), durations in milliseconds once parsed. It takes the boundary
 * keys every channel has ({@link channelAccountShape}), not the room and pairing ones: clients
 * authenticate with client tokens, so `dmPolicy` defaults to `allowlist` and `allowFrom` takes
 * any string.
 */
export const websocketAccountSchema = z.strictObject({
  /** Browser origins allowed to connect; a client without an Origin header needs a valid token. */
  allowedOrigins: z.array(z.url().refine((u) => u !== '*', 'wildcard origins are not allowed')).default([]),
  dmPolicy: dmPolicySchema.default('allowlist'),
  allowFrom: z.array(z.string()).default([]),
  required: channelAccountShape.required,
  /** A client that authenticates by frame must send `hello` within this time. */
  helloTimeout: duration.default(10_000),
  /** Largest accepted frame, in bytes, on a connection whose upgrade carried a valid token (others: 64 KiB). */
  maxPayload: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  /** Open connections not yet authenticated, per client address (IPv6 by /64) and in all. */
  maxUnauthenticatedPerAddress: z.number().int().min(1).max(10_000).default(8),
  maxUnauthenticated: z.number().int().min(1).max(100_000).default(1000),
  queueMode: channelAccountShape.queueMode,
  rateLimit: channelAccountShape.rateLimit,
  permissionMode: channelAccountShape.permissionMode,
});

/** One WebSocket account as the adapter gets it: the parsed config (durations in milliseconds). */
export type WebsocketAccountConfig = z.output<typeof websocketAccountSchema>;
