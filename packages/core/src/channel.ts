import type { AgentEvent } from '@switchboard/agent';
import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { AccessListener } from './access-events.js';
import type { DeadLetterInput } from './dead-letters.js';
import type { TurnEndReason, TurnEndState } from './turn-end.js';

/** Where a reply goes: one conversation on one channel account. */
export interface ConversationRef {
  channel: string;
  account: string;
  /** Platform conversation id (a chat, a channel, a principal's DM on WebSocket). */
  id: string;
  kind: 'dm' | 'room';
  thread?: string;
}

export interface SenderRef {
  /** The identity's external id on this kind of channel (e.g. `ws:<tokenId>`, `telegram:<userId>`). */
  identity: string;
  displayName?: string;
  isBot: boolean;
}

/** One inbound item, as a channel hands it to the gateway. */
export interface InboundMessage {
  /** Unique per (channel, account): see DESIGN.md §4. */
  dedupeKey: string;
  channel: string;
  account: string;
  conversation: ConversationRef;
  sender: SenderRef;
  kind: 'dm' | 'room';
  mentioned: boolean;
  text: string;
  platformId: string;
  receivedAt: Date;
  /** Set by channels that authenticate the sender themselves (WebSocket client tokens). */
  principalId?: string;
}

/** Events a turn's renderer receives: the loop's events plus the gateway's own end-of-turn summary. */
export type TurnEvent =
  | AgentEvent
  | {
      type: 'turn_end';
      /** Final state of the turn. */
      state: TurnEndState;
      reason: TurnEndReason;
      /** Everything the assistant said in this turn (from the transcript, so it survives restarts). */
      text: string;
      error?: string;
    };

/** What the gateway answers when a channel accepts an inbound item. */
export interface AcceptResult {
  /** True when this dedupe key was seen before: nothing new was queued. */
  duplicate: boolean;
  /**
   * On a duplicate: whether the stored item has the same text as this message (false: the id was
   * re-used for a different message, not retried). Absent when unknown (e.g. the stored text was purged).
   */
  sameText?: boolean;
  /**
   * The boundary gate's decision. Only `admitted` items get a turn; for the others the gateway
   * has already told the sender (through Channel.notify) where that is appropriate.
   */
  gate?: 'admitted' | 'pairing' | 'held' | 'refused' | 'rate_limited' | 'ignored';
  inboxId: string;
  turnId: string | null;
  sessionId: string | null;
}

export interface ChannelContext {
  log: Logger;
  /** Durably records the item (inbox) and queues its turn. Call before acknowledging the platform. */
  accept(message: InboundMessage): Promise<AcceptResult>;
  /**
   * How many times a channel tries to accept (store and process) one inbound item before it
   * dead-letters it (`limits.inboxMaxAttempts`).
   */
  readonly inboxMaxAttempts: number;
  /**
   * Records an item given up on as a dead letter (logged, counted, listed in the control API) so
   * the channel can move past it. The channel apologises to the sender itself, when it knows them.
   */
  deadLetter(item: DeadLetterInput): Promise<void>;
  http: { register(plugin: FastifyPluginAsync): Promise<void> };
  /**
   * Resolves a client token to its principal; null if unknown or revoked. Constant-time. With the
   * client's `address` (a key from {@link ChannelContext.clientAddress}), the attempt counts
   * towards failed-auth rate limiting from before the lookup, and a locked-out address gets
   * `{ lockedOut, retryAfterSec }` whatever the token.
   */
  verifyClientToken(secret: string, address?: string): Promise<ClientTokenCheck>;
  /**
   * The key of the client behind a request: its socket address, or the address a trusted proxy
   * (`gateway.trustedProxies`) reports; IPv6 aggregated by /64. Rate limits and caps use this.
   */
  clientAddress(req: IncomingMessage): string;
  /** Subscribes to access changes (token revoked, principal removed or demoted); returns the unsubscribe. */
  onAccessChange(listener: AccessListener): () => void;
  /** False once the gateway is shutting down: refuse new connections. */
  accepting(): boolean;
  /** Whether a client token (by id) is still valid: revoked tokens lose their open connections. */
  clientTokenActive(tokenId: string): Promise<boolean>;
  /** Replays stored final parts of a conversation after a cursor (delivery ledger). */
  finalsSince(conversation: ConversationRef, cursor: number): Promise<DeliveryRecord[]>;
  /** Records a delivered part in the ledger; returns the record (existing one if already recorded). */
  recordDelivery(part: NewDelivery): Promise<{ record: DeliveryRecord; existed: boolean }>;
  /** The ledger rows of one turn. */
  deliveriesOf(turnId: string): Promise<DeliveryRecord[]>;
  /** Changes a person's own session settings (queue mode); returns the effective settings. */
  updateSession(
    conversation: ConversationRef,
    principalId: string,
    patch: { queueMode?: 'followup' | 'steer' },
  ): Promise<{ sessionId: string; queueMode: 'followup' | 'steer' }>;
  /** Ends the conversation's live session: the next message starts an empty history. */
  resetSession(conversation: ConversationRef, principalId: string): Promise<void>;
  /** The principal an identity (`telegram:<userId>`, `slack:<team>:<user>`, `ws:<tokenId>`) belongs to. */
  principalFor(identity: string): Promise<{ principalId: string; role: string } | null>;
  /**
   * The approvals still pending in this conversation whose turn has not ended, oldest first (all
   * of them, or those of one turn): what a client that comes back is shown again.
   */
  pendingApprovals(conversation: ConversationRef, turnId?: string): Promise<PendingApproval[]>;
  /** Answers an approval as a principal (chat buttons, frames): checked against who may approve, claimed atomically. */
  decideApproval(approvalId: string, decision: 'allow' | 'deny', always: boolean, by: { principalId: string }): Promise<ApprovalAnswer>;
  /** What `/status` shows: never a secret. */
  sessionStatus(conversation: ConversationRef, principalId: string): Promise<SessionStatus>;
  /** Changes the person's own session mode, within what their role and broader scopes allow. */
  setMode(conversation: ConversationRef, principalId: string, mode: string): Promise<{ ok: true; mode: string } | { ok: false; reason: string }>;
  /** Aborts the running turn of the conversation's session, if any (`/stop`). */
  stopRunning(conversation: ConversationRef, principalId: string): Promise<boolean>;
  /** Aborts a running turn if it belongs to this conversation (user `abort`). */
  abortTurn(turnId: string, conversation: ConversationRef): Promise<boolean>;
}

/** A pending approval as a chat shows its request (the stored approval, with its turn's client id). */
export interface PendingApproval {
  approvalId: string;
  turnId: string;
  /** The client id of the message whose turn asked (WebSocket), or null. */
  clientId: string | null;
  tool: string;
  summary: string;
  /** ISO time. */
  expiresAt: string;
  source: string;
}

/** The outcome of answering an approval, as a chat shows it. */
export interface ApprovalAnswer {
  outcome: 'decided' | 'already_decided' | 'forbidden' | 'not_found';
  /** `allowed`, `denied`, `expired` or `cancelled` once decided. */
  status?: string;
  decidedBy?: string;
  /** Why it was refused (forbidden). */
  reason?: string;
  tool?: string;
}

export interface SessionStatus {
  sessionId: string;
  model: string;
  mode: string;
  queueMode: string;
  entries: number;
  pendingApprovals: number;
  running: boolean;
}

export interface ChannelCapabilities {
  threads: boolean;
  edits: boolean;
  buttons: boolean;
  maxText: number;
}

export interface ChannelHealth {
  /** `starting`: not up yet and never was since start (still connecting, or retrying an unreachable platform). */
  state: 'starting' | 'up' | 'degraded' | 'down';
  detail?: string;
}

/** A channel adapter. */
/** The outcome of {@link ChannelContext.verifyClientToken}. */
export type ClientTokenCheck = { principalId: string; tokenId: string } | { lockedOut: true; retryAfterSec: number } | null;

export interface Channel {
  /** `<type>:<account>`, e.g. `websocket:default`. */
  id: string;
  type: string;
  account: string;
  required: boolean;
  capabilities: ChannelCapabilities;
  /** Contract: resolve once receiving; deliver every inbound item through ctx.accept (durable). */
  start(ctx: ChannelContext): Promise<void>;
  health(): ChannelHealth;
  /** Idempotent; in-flight sends settle. `reason` is shown to connected clients where possible. */
  stop(reason?: 'shutdown' | 'reload'): Promise<void>;
  /** Contract: ledger drafts and finals; on resume edit/delete a recorded draft, skip finals. Must not throw. */
  render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void>;
  /** Sends a notice from the gateway itself (pairing codes, refusals, rate limits). Must not throw. */
  notify(to: ConversationRef, text: string): Promise<void>;
}

export interface RenderMeta {
  /** The inbound item's client id / dedupe key, echoed to clients that correlate replies. */
  clientId: string | null;
  /** True when this render continues a turn a previous process started. */
  resumed: boolean;
}

export type TurnState = 'queued' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'interrupted' | 'suspended';

export interface NewDelivery {
  turnId: string;
  part: number;
  kind: 'draft' | 'final';
  channel: string;
  account: string;
  conversationId: string;
  platformMessageId: string | null;
  /** What was delivered (for replay to reconnecting clients). */
  content: { text: string; error?: string; state?: string; reason?: string; clientId?: string | null };
}

export interface DeliveryRecord extends NewDelivery {
  /** Monotonic ledger id: the replay cursor. */
  id: number;
  createdAt: Date;
}

/** What the gateway gives a channel package's factory. */
export interface ChannelFactoryDeps {
  dataDir: string;
  log: Logger;
  /**
   * Where a config value came from, for messages: its key (`channels.slack.accounts.team.botToken`)
   * and the `${VAR}` names the config file used for it (never the value). `path` is relative to the
   * account (`['botToken']`).
   */
  configSource?(account: string, path: readonly string[]): ConfigSource;
}

/** The config key of a value and the environment variables it was read from (see {@link ChannelFactoryDeps.configSource}). */
export interface ConfigSource {
  key: string;
  variables: readonly string[];
}

/**
 * Every channel package exports `createChannels`: one Channel per configured account. The
 * account objects are the validated config (see apps/gateway/src/config-channels.ts).
 */
export type ChannelFactory<A = unknown> = (accounts: Readonly<Record<string, A>>, deps: ChannelFactoryDeps) => Channel[];
