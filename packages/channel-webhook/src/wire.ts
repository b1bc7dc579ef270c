import { permissionModeSchema } from '@switchboard/core';
import { z } from 'zod';

/** Longest accepted message text, in characters. */
export const MAX_TEXT = 32_768;

const printable = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');

/** A sender id: no whitespace and no `:` (the identity is `webhook:<id>`, matched by allowFrom). */
const senderId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^\s:]+$/, 'must not contain whitespace or ":"');

/** The body of `POST /channels/webhook/<account>`. */
export const inboundMessageSchema = z.strictObject({
  /** The platform's message id: the dedupe key (a re-sent id is answered once). */
  id: printable(128),
  sender: z.strictObject({
    id: senderId,
    name: printable(128).optional(),
    isBot: z.boolean().optional(),
  }),
  conversation: z.strictObject({
    id: printable(128),
    kind: z.enum(['dm', 'room']),
    thread: printable(128).optional(),
  }),
  text: z.string().min(1).max(MAX_TEXT),
  /** Rooms: whether the assistant was mentioned (DMs always count as mentioned). */
  mentioned: z.boolean().optional(),
});
export type InboundWebhookMessage = z.output<typeof inboundMessageSchema>;

/** The body of `POST /channels/webhook/<account>/approvals/<id>`. */
export const approvalDecisionSchema = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  /** Save a rule so the same call is not asked again (no wider than the approver's authority). */
  always: z.boolean().optional(),
  /** A plan approval's choice: the mode to switch to (one of the request's `choices`; absent: the first). */
  mode: permissionModeSchema.optional(),
  /** The platform id of the person answering (their identity is `webhook:<senderId>`). */
  senderId,
});
export type ApprovalDecision = z.output<typeof approvalDecisionSchema>;

/** The first problem of a failed parse, as `{ field, message }` (field `(body)` for the root). */
export function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { field: '(body)', message: 'invalid body' };
  let field = issue.path.map(String).join('.') || '(body)';
  if (issue.code === 'unrecognized_keys') field = issue.keys.map((k) => [...issue.path.map(String), k].join('.')).join(', ');
  return { field, message: issue.message };
}

/** Where a callback is about: the conversation as the platform named it. */
export interface CallbackConversation {
  id: string;
  kind: 'dm' | 'room';
  thread?: string;
}

/** Fields every callback carries. `id` is stable across retries and restarts: dedupe on it. */
interface CallbackBase {
  id: string;
  account: string;
  conversation: CallbackConversation;
}

/** A turn's final answer (one per turn; no streaming deltas). */
export interface ReplyCallback extends CallbackBase {
  type: 'reply';
  turnId: string;
  /** The inbound message id this answers. */
  replyTo: string | null;
  text: string;
  final: true;
  part: number;
  /** `completed`, `failed` or `interrupted`. */
  state: string;
  /** Why the turn ended (`completed`, `max_turns`, `model_error`, …). */
  reason: string;
  /** A message for the person when the turn did not complete normally. */
  error?: string;
}

/** A notice from the gateway itself: pairing codes, refusals, rate limits. */
export interface NoticeCallback extends CallbackBase {
  type: 'notice';
  text: string;
}

/** A tool call waiting for a person's decision. */
export interface ApprovalRequestCallback extends CallbackBase {
  type: 'approval_request';
  turnId: string;
  replyTo: string | null;
  approvalId: string;
  tool: string;
  summary: string;
  expiresAt: string;
  /** Which step asked (`mode`, `rule`, `safety`, `hook`, `sandbox`, `plan`). */
  source?: string;
  /** A plan approval's choices: the modes an allow may switch to (send one as `mode`); such an approval cannot be always allowed. */
  choices?: readonly string[];
}

/** An approval was decided (by anyone: the person, an operator, a hook, the timeout). */
export interface ApprovalResolvedCallback extends CallbackBase {
  type: 'approval_resolved';
  turnId: string;
  approvalId: string;
  allowed: boolean;
  by: string;
}

/**
 * A tool call of a running turn: `start` when it begins, `progress` while it runs (coalesced: the
 * newest report only), `end` when it finished. Best-effort: one attempt each, not ledgered.
 */
export interface ToolCallback extends CallbackBase {
  type: 'tool';
  turnId: string;
  replyTo: string | null;
  toolUseId: string;
  name: string;
  phase: 'start' | 'progress' | 'end';
  /** A short, scrubbed summary of the input: the host for web_fetch, the first words for exec, the path for file tools, else `''`. */
  summary: string;
  /** `progress`: the tool's report (e.g. `12 lines so far, 5s`). */
  message?: string;
  lines?: number;
  elapsedMs?: number;
  /** `end`: true when the call failed (or was refused). */
  isError?: boolean;
}

/** Every JSON body the gateway POSTs to an account's `callbackUrl`. */
export type WebhookCallback = ReplyCallback | NoticeCallback | ApprovalRequestCallback | ApprovalResolvedCallback | ToolCallback;
