import { boundaryShape, duration, refineBoundary } from '@switchboard/core';
import { z } from 'zod';

/**
 * One Slack workspace app account: `channels.slack.accounts.<id>`, durations in milliseconds once
 * parsed. The boundary keys are enforced by the gateway's gate; the adapter reads the platform keys.
 */
export const slackAccountSchema = z
  .strictObject({
    ...boundaryShape,
    /** Slack tokens (`xoxb-…`, `xapp-…`) and signing secrets (32 hex) are never shorter than these minimums. */
    botToken: z.string().min(20),
    mode: z.enum(['socket', 'http']).default('http'),
    /** Socket Mode: the app-level token (`xapp-…`). */
    appToken: z.string().min(20).optional(),
    /** HTTP mode: the signing secret for `X-Slack-Signature`. */
    signingSecret: z.string().min(16).optional(),
    /** Web API root (tests), e.g. http://127.0.0.1:PORT/api/. */
    apiUrl: z.url().default('https://slack.com/api/'),
    /** Socket Mode: no envelope and no pong for this long → the socket is deaf: reconnect. */
    livenessTimeout: duration.default(60_000),
    /** Socket Mode: the SDK pings every third of this and drops the socket without a pong within it. */
    clientPingTimeout: duration.default(15_000),
    /** Socket Mode: the longest wait between reconnect attempts. */
    reconnectBackoffMax: duration.default(30_000),
    /** Retries of one Web API call after a network error or 5xx (429: Retry-After); 401/403 and refused tokens are never retried. */
    maxRetries: z.number().int().min(0).max(10).default(3),
    /** Minimum time between edits of a streamed draft. */
    editInterval: duration.default(1_000),
    /** Time limit of one Web API request (retries come on top). */
    apiTimeout: duration.default(15_000),
    /** Files people share above this size are refused with a reply naming this key; smaller ones land in their workspace's inbox/. */
    maxInboundMediaBytes: z
      .number()
      .int()
      .min(0)
      .default(20 * 1024 * 1024),
    /** After Slack refused a token (invalid_auth, token_revoked, 401…): the account is down until this much later, then tried again. */
    refusedRetryInterval: duration.default(600_000),
  })
  .superRefine(refineBoundary)
  .superRefine((v, ctx) => {
    // An idle healthy socket proves itself with a pong every clientPingTimeout/3.
    if (v.livenessTimeout < v.clientPingTimeout / 2) {
      ctx.addIssue({ code: 'custom', path: ['livenessTimeout'], message: 'livenessTimeout must be at least half of clientPingTimeout' });
    }
    if (v.mode === 'socket' && !v.appToken) ctx.addIssue({ code: 'custom', path: ['appToken'], message: 'socket mode requires appToken' });
    if (v.mode === 'http' && !v.signingSecret) ctx.addIssue({ code: 'custom', path: ['signingSecret'], message: 'http mode requires signingSecret' });
  });

/** One Slack workspace app account as the adapter gets it: the parsed config (durations in milliseconds). */
export type SlackAccountConfig = z.output<typeof slackAccountSchema>;
