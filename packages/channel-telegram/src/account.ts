import { compileSafeRegex, SafeRegexError } from '@switchboard/agent';
import { boundaryShape, duration, refineBoundary } from '@switchboard/core';
import { z } from 'zod';

/**
 * One Telegram bot account: `channels.telegram.accounts.<id>`, durations in milliseconds once
 * parsed. The boundary keys (dmPolicy, allowFrom, groups…) are enforced by the gateway's gate in
 * `ctx.accept`; the adapter reads only the platform keys.
 */
export const telegramAccountSchema = z
  .strictObject({
    ...boundaryShape,
    /** `<bot id>:<35 characters>`; anything shorter is not a Bot API token. */
    token: z.string().min(20),
    /** Bot API root (tests and self-hosted Bot API servers); parsed without a trailing slash. */
    apiRoot: z
      .url()
      .default('https://api.telegram.org')
      .transform((u) => u.replace(/\/+$/, '')),
    mode: z.enum(['polling', 'webhook']).default('polling'),
    /** Webhook mode: the secret Telegram sends in X-Telegram-Bot-Api-Secret-Token. */
    webhookSecret: z.string().min(16).max(256).optional(),
    /** Webhook mode: the public URL Telegram posts to (registered with setWebhook when set). */
    webhookUrl: z.url().optional(),
    /** Long-poll timeout passed to getUpdates. */
    pollTimeout: duration.default(30_000),
    /** A getUpdates call that has not completed in this long is aborted and restarted (stall watchdog). */
    pollStallTimeout: duration.default(90_000),
    typingInterval: duration.default(4_000),
    /** Minimum time between edits of a streamed draft. */
    editInterval: duration.default(1_000),
    /** Per-chat minimum time between sends. */
    chatSendInterval: duration.default(1_000),
    /** Retries of an outbound call after a network error, a 5xx or a short 429 (never after 4xx). */
    maxRetryAttempts: z.number().int().min(0).max(10).default(3),
    /** Outbound retries (network, 5xx): first delay, doubling up to retryMaxDelay. */
    retryBaseDelay: duration.default(1_000),
    retryMaxDelay: duration.default(30_000),
    /** Time limit of one outbound Bot API call (getUpdates has its own). */
    apiTimeout: duration.default(15_000),
    /** A token the Bot API refused (401) is tried again this often. */
    authRetryInterval: duration.default(300_000),
    maxInboundMediaBytes: z
      .number()
      .int()
      .min(0)
      .default(20 * 1024 * 1024),
    /** Extra patterns that count as a mention in groups (case-insensitive, RE2 syntax: linear time, no backreferences or lookaround). */
    mentionPatterns: z.array(z.string().min(1).max(200)).default([]),
  })
  .superRefine(refineBoundary)
  .superRefine((v, ctx) => {
    if (v.mode === 'webhook' && !v.webhookSecret) ctx.addIssue({ code: 'custom', path: ['webhookSecret'], message: 'webhook mode requires webhookSecret' });
    if (v.webhookSecret !== undefined && !/^[A-Za-z0-9_-]+$/.test(v.webhookSecret)) {
      ctx.addIssue({ code: 'custom', path: ['webhookSecret'], message: 'Telegram accepts only A-Z, a-z, 0-9, _ and - in a webhook secret' });
    }
    if (v.pollTimeout < 1000)
      ctx.addIssue({ code: 'custom', path: ['pollTimeout'], message: 'pollTimeout must be at least 1s (getUpdates counts whole seconds)' });
    if (v.pollStallTimeout <= v.pollTimeout) {
      ctx.addIssue({
        code: 'custom',
        path: ['pollStallTimeout'],
        message: 'pollStallTimeout must be longer than pollTimeout, or every idle long poll would count as stalled',
      });
    }
    for (const [i, p] of v.mentionPatterns.entries()) {
      try {
        compileSafeRegex(p, { caseInsensitive: true });
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['mentionPatterns', i], message: err instanceof SafeRegexError ? err.message : String(err) });
      }
    }
  });

/** One Telegram bot account as the adapter gets it: the parsed config (durations in milliseconds). */
export type TelegramAccountConfig = z.output<typeof telegramAccountSchema>;
