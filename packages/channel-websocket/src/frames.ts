import { permissionModeSchema } from '@switchboard/core';
import { z } from 'zod';

/** A command frame's `name`: up to 32 letters, digits, `_` or `-`, optionally after one `/`. */
const COMMAND_NAME = /^\/?[A-Za-z0-9_-]{1,32}$/;

/** The longest `args` of a command frame (a `/compact` instruction fits). */
export const MAX_COMMAND_ARGS = 4000;

/** Frames a client may send (see docs/protocol.md). */
export const clientFrame = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('hello'),
    token: z.string().min(1).max(512).optional(),
    /** The last `cursor` the client saw; finals after it are replayed. */
    cursor: z.number().int().min(0).optional(),
  }),
  z.strictObject({
    type: z.literal('message'),
    /** The client's id for this message: re-sending it never runs a second turn. */
    clientId: z.string().min(1).max(128),
    text: z.string().min(1).max(100_000),
  }),
  z.strictObject({ type: z.literal('abort'), turnId: z.string().min(1).max(64) }),
  /** How messages sent during a running turn are handled in one's own session. */
  z.strictObject({ type: z.literal('queue'), mode: z.enum(['followup', 'steer']) }),
  /** Starts a fresh session: the next message begins an empty history. */
  z.strictObject({ type: z.literal('new_session') }),
  /**
   * Answers an approval request. `always` saves an allow rule no wider than your authority; `mode`
   * answers a plan approval (the request's `choices`): the mode to switch to (absent: the first).
   */
  z.strictObject({
    type: z.literal('approve'),
    approvalId: z.string().min(1).max(64),
    decision: z.enum(['allow', 'deny']),
    always: z.boolean().optional(),
    mode: permissionModeSchema.optional(),
  }),
  /** Sets the permission mode of your own session (within what your role allows). */
  z.strictObject({ type: z.literal('mode'), mode: z.string().min(1).max(32) }),
  /** Runs a chat command (`/context`, `/status`, …) in your own session, as the chat channels do. */
  z.strictObject({
    type: z.literal('command'),
    /** The command's name, with or without its slash (`context`, `/context`). */
    name: z.string().regex(COMMAND_NAME, 'a command name: letters, digits, _ or -, optionally after one /').max(33),
    /** The text after the command name (`/mode plan` → `plan`). */
    args: z.string().max(MAX_COMMAND_ARGS).optional(),
  }),
]);

/** The client frame types, for telling an unknown frame from an invalid one. */
export const CLIENT_FRAME_TYPES: readonly string[] = ['hello', 'message', 'abort', 'queue', 'new_session', 'approve', 'mode', 'command'];
export type ClientFrame = z.infer<typeof clientFrame>;

/** Frames the server sends. */
export type ServerFrame =
  | { type: 'hello_ok'; principalId: string; cursor: number }
  | { type: 'accepted'; clientId: string; turnId: string | null; duplicate: boolean }
  | { type: 'queue_ok'; mode: 'followup' | 'steer'; sessionId: string }
  | { type: 'session_reset' }
  /** `choices`: a plan approval's modes (answer with `approve` + `mode`); such a request offers no "always allow". */
  | {
      type: 'approval_request';
      approvalId: string;
      turnId: string;
      clientId: string | null;
      tool: string;
      summary: string;
      expiresAt: string;
      source?: string;
      choices?: readonly string[];
    }
  | { type: 'approval_resolved'; approvalId: string; turnId: string; allowed: boolean; by: string }
  | { type: 'approval_result'; approvalId: string; outcome: string; status?: string; decidedBy?: string; reason?: string; choice?: string }
  | { type: 'mode_ok'; mode: string }
  | { type: 'notice'; text: string }
  | { type: 'delta'; turnId: string; clientId: string | null; text: string }
  | { type: 'attempt_reset'; turnId: string; clientId: string | null }
  | { type: 'tool'; turnId: string; clientId: string | null; phase: 'start' | 'end'; name: string; toolUseId: string; isError?: boolean }
  /** A running tool's progress (`exec`: lines so far and elapsed time; `waiting for a free runner`). */
  | {
      type: 'tool';
      turnId: string;
      clientId: string | null;
      phase: 'progress';
      name: string;
      toolUseId: string;
      message: string;
      lines?: number;
      elapsedMs?: number;
    }
  | { type: 'final'; turnId: string; clientId: string | null; text: string; reason: string; cursor: number; note?: string }
  /** A file `send_file` delivered: fetch `url` (`GET /files/{id}`) with the principal's client token before `expiresAt`. */
  | { type: 'file'; turnId: string; fileId: string; name: string; mimeType: string; size: number; url: string; expiresAt: string; caption?: string }
  | { type: 'error'; code: string; message: string; turnId?: string; clientId?: string | null; text?: string; cursor?: number }
  | CommandResultFrame;

/**
 * The answer to a `command` frame that is neither an error nor one of the older frames
 * (`session_reset`, `mode_ok`): `context`, `usage` and `compacted` for those commands,
 * `command_result` (with `command`) for the others. `outcome` and the rest are the command's
 * result as the core runner answers it (see `ChatCommandResult`).
 */
export type CommandResultFrame = {
  type: 'context' | 'usage' | 'compacted' | 'command_result';
  outcome: string;
  command?: string;
  [field: string]: unknown;
};

/** Largest frame on a connection whose upgrade carried no valid token, for its whole life. */
export const MAX_PREAUTH_BYTES = 64 * 1024;
