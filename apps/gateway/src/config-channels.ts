import { compileSafeRegex, SafeRegexError } from '@switchboard/agent';
import { z } from 'zod';
import { duration } from './duration.js';
import { checkRuleText } from './registry.js';

const dmPolicy = z.enum(['pairing', 'allowlist', 'open', 'disabled']);
const groupPolicy = z.enum(['allowlist', 'open', 'disabled']);
const ROLE = z.enum(['owner', 'admin', 'member', 'guest']);
/** A permission mode (DESIGN §1); a mode set at a scope may lower trust, never raise it. */
export const permissionModeSchema = z.enum(['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions']);
/** A tool name or rule denied at a scope (`read_file`, `mcp__github`, `group:fs`, `write_file(secrets/**)`), checked when the config loads. */
const denyToolRule = z
  .string()
  .min(1)
  .max(128)
  .superRefine((s, ctx) => {
    const check = checkRuleText(s);
    if (!check.ok) ctx.addIssue({ code: 'custom', message: check.message });
  });

/** One room's settings in a `groups` map (the room allowlist). */
export const roomSchema = z.strictObject({
  /** In this room the assistant answers only when mentioned. */
  requireMention: z.boolean().default(true),
  /** Senders allowed in this room (empty: anyone in the room). */
  allowFrom: z.array(z.string().min(1).max(128)).default([]),
  /** Permission mode of turns in this room (conversation scope): lowers trust, never raises it. */
  mode: permissionModeSchema.optional(),
  /** Tools (or rules) denied in this room: deny rules at its conversation scope, never offered to the model. */
  denyTools: z.array(denyToolRule).default([]),
});

/** Per-sender rate limit: a token bucket. */
export const rateLimitSchema = z.strictObject({
  /** Messages a sender may send in a burst. */
  burst: z.number().int().min(1).max(1000).default(10),
  /** Tokens added back per minute. */
  perMinute: z.number().min(0.1).max(6000).default(20),
});

/** The boundary keys every channel account has (DESIGN.md §1, layer 1). */
export const boundaryShape = {
  dmPolicy: dmPolicy.default('pairing'),
  /** Sender ids admitted without pairing (`"*"` = anyone; required for dmPolicy `open`). */
  allowFrom: z.array(z.string().min(1).max(128)).default([]),
  groupPolicy: groupPolicy.default('allowlist'),
  /** The room allowlist, keyed by the platform's room id. */
  groups: z.record(z.string().min(1).max(128), roomSchema).default({}),
  /** Default for rooms without their own setting. */
  requireMention: z.boolean().default(true),
  /** When true, /readyz answers 503 while this account is down. */
  required: z.boolean().default(false),
  rateLimit: rateLimitSchema.default({ burst: 10, perMinute: 20 }),
  /** Role given to people admitted by pairing. */
  pairingRole: ROLE.default('member'),
  queueMode: z.enum(['followup', 'steer']).optional(),
  /** Permission mode of every conversation on this account (channel scope): lowers trust, never raises it. */
  permissionMode: permissionModeSchema.optional(),
};

/** dmPolicy `open` needs an explicit `"*"` in allowFrom, so a typo never opens a bot to the world. */
export function refineBoundary(v: { dmPolicy: string; allowFrom: string[] }, ctx: z.RefinementCtx): void {
  if (v.dmPolicy === 'open' && !v.allowFrom.includes('*')) {
    ctx.addIssue({ code: 'custom', path: ['allowFrom'], message: 'dmPolicy "open" requires "*" in allowFrom' });
  }
}

export const telegramAccountSchema = z
  .strictObject({
    ...boundaryShape,
    /** `<bot id>:<35 characters>`; anything shorter is not a Bot API token. */
    token: z.string().min(20),
    /** Bot API root (tests and self-hosted Bot API servers). */
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

export const slackAccountSchema = z
  .strictObject({
    ...boundaryShape,
    /** Slack tokens (`xoxb-…`, `xapp-…`) and signing secrets (32 hex) are never shorter than these minimums. */
    botToken: z.string().min(20),
    mode: z.enum(['socket', 'http']).default('http'),
    appToken: z.string().min(20).optional(),
    signingSecret: z.string().min(16).optional(),
    /** Web API root (tests), e.g. http://127.0.0.1:PORT/api/. */
    apiUrl: z.url().default('https://slack.com/api/'),
    /** Socket Mode: no envelope and no pong for this long → the socket is deaf: reconnect. */
    livenessTimeout: duration.default(60_000),
    clientPingTimeout: duration.default(15_000),
    reconnectBackoffMax: duration.default(30_000),
    /** Retries of one Web API call after a network error or 5xx (429: Retry-After); 401/403 and refused tokens are never retried. */
    maxRetries: z.number().int().min(0).max(10).default(3),
    editInterval: duration.default(1_000),
    /** Time limit of one Web API request (retries come on top). */
    apiTimeout: duration.default(15_000),
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

export type TelegramAccountConfig = z.output<typeof telegramAccountSchema>;
export type SlackAccountConfig = z.output<typeof slackAccountSchema>;
export type WebhookAccountConfig = z.output<typeof webhookAccountSchema>;
