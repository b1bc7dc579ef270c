import { z } from 'zod';
import { checkRuleText } from './permissions/rule-text.js';
import { permissionModeEnum } from './permissions/modes.js';

/**
 * The boundary keys of a channel account (DESIGN.md §1, layer 1), as zod schemas every channel
 * package's account schema extends (`channels.<type>.accounts.<id>`). The gateway's gate reads
 * them from the parsed config; channel adapters read only their platform keys.
 */

/** Who may open a DM: pairing (codes), an allowlist, anyone (`open`, needs `"*"`), or nobody. */
export const dmPolicySchema = z.enum(['pairing', 'allowlist', 'open', 'disabled']);
/** Which rooms the assistant answers in: the `groups` allowlist, any room, or none. */
export const groupPolicySchema = z.enum(['allowlist', 'open', 'disabled']);
/** A principal's role. */
export const roleSchema = z.enum(['owner', 'admin', 'member', 'guest']);
/** A permission mode (DESIGN §1); a mode set at a scope may lower trust, never raise it. */
export const permissionModeSchema = permissionModeEnum;
/** How a message that arrives during a turn is handled: queued as the next turn, or injected into the running one. */
export const queueModeSchema = z.enum(['followup', 'steer']);

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

/** The keys every channel account has, whatever its platform. */
export const channelAccountShape = {
  dmPolicy: dmPolicySchema.default('pairing'),
  /** Sender ids admitted without pairing (`"*"` = anyone; required for dmPolicy `open`). */
  allowFrom: z.array(z.string().min(1).max(128)).default([]),
  /** When true, /readyz answers 503 while this account is down. */
  required: z.boolean().default(false),
  /** Per-sender rate limit (token bucket). */
  rateLimit: rateLimitSchema.default({ burst: 10, perMinute: 20 }),
  /** Overrides the agent's queue mode for sessions on this account. */
  queueMode: queueModeSchema.optional(),
  /** Permission mode of every conversation on this account (channel scope): lowers trust, never raises it. */
  permissionMode: permissionModeSchema.optional(),
};

/** The keys of an account on a platform with rooms and strangers (Telegram, Slack, webhook): rooms and pairing. */
export const roomAccountShape = {
  groupPolicy: groupPolicySchema.default('allowlist'),
  /** The room allowlist, keyed by the platform's room id. */
  groups: z.record(z.string().min(1).max(128), roomSchema).default({}),
  /** Default for rooms without their own setting. */
  requireMention: z.boolean().default(true),
  /** Role given to people admitted by pairing. */
  pairingRole: roleSchema.default('member'),
};

/** Every boundary key of a chat account: {@link channelAccountShape} and {@link roomAccountShape} (in the order config errors list them). */
export const boundaryShape = {
  dmPolicy: channelAccountShape.dmPolicy,
  allowFrom: channelAccountShape.allowFrom,
  groupPolicy: roomAccountShape.groupPolicy,
  groups: roomAccountShape.groups,
  requireMention: roomAccountShape.requireMention,
  required: channelAccountShape.required,
  rateLimit: channelAccountShape.rateLimit,
  pairingRole: roomAccountShape.pairingRole,
  queueMode: channelAccountShape.queueMode,
  permissionMode: channelAccountShape.permissionMode,
};

/** dmPolicy `open` needs an explicit `"*"` in allowFrom, so a typo never opens a bot to the world. */
export function refineBoundary(v: { dmPolicy: string; allowFrom: string[] }, ctx: z.RefinementCtx): void {
  if (v.dmPolicy === 'open' && !v.allowFrom.includes('*')) {
    ctx.addIssue({ code: 'custom', path: ['allowFrom'], message: 'dmPolicy "open" requires "*" in allowFrom' });
  }
}
