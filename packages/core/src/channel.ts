import type { ForgetOutcome, MemoryListing } from './memory/desk.js';
import type { ManualCompactResult } from './context/compaction-engine.js';
import type { PersonalUsage } from './budgets/service.js';
import type { AgentEvent, OutboundFile } from '@switchboard/agent';
import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AccessListener } from './access-events.js';
import type { ChannelFanout, SharedMarks } from './replica-bus.js';
import type { ChatCommandInput, ChatCommandResult, ChatCommandSpec } from './chat-commands.js';
import type { ContextReport } from './context/context-report.js';
import type { AutoModeStatus } from './policy/auto-mode-status.js';
import type { DeadLetterInput } from './dead-letters.js';
import type { FileShelf } from './file-shelf.js';
import type { InboundImage } from './inbound-images.js';
import type { ChannelDoctor } from './doctor-check.js';
import type { TurnEndReason, TurnEndState } from './turn-end.js';
import type { Storage } from './storage.js';

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
  /**
   * The agent the person addressed (the OpenAI channel's `model`); one of {@link ChannelInbox.agents}.
   * Absent: the gateway's default agent. An unknown id is refused (`SWB_E_UNKNOWN_AGENT`).
   */
  agentId?: string;
  /**
   * A DM session the person's client named, already scoped by the channel (the OpenAI channel: token
   * id and `X-Switchboard-Session` label); the session is keyed by it beside the principal. Absent:
   * the person's default session.
   */
  sessionLabel?: string;
  /**
   * Files the person sent with the message (Telegram, Slack). The router saves them in the
   * sender's workspace under `inbox/` before the turn is queued and tells the model where they
   * are (see `inbound-files.ts`); they are never stored with the inbox item.
   */
  files?: InboundFile[];
  /** Images among the saved files (set by the router), shown to the model as image blocks when it accepts them (see `inbound-images.ts`). */
  images?: InboundImage[];
}

/** A file a person sent, described by the channel and fetched by the gateway (see {@link InboundMessage.files}). */
export interface InboundFile {
  /** The name the platform gave (untrusted: the gateway sanitises it). */
  name: string;
  /** The media type the platform declared (untrusted). */
  mimeType: string;
  kind: 'document' | 'image';
  /** The size the platform declared, in bytes, when it did. */
  size?: number;
  /**
   * Downloads the file. Contract: rejects (never resolves a partial file) when the download fails
   * or grows over the channel's `maxInboundMediaBytes`; the error message is safe to show (no token).
   */
  fetch(): Promise<Uint8Array>;
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

/**
 * What the gateway gives a channel adapter in {@link Channel.start}: eight capability groups, each
 * with its own contract. A channel uses only the groups it needs (the WebSocket channel: inbox,
 * ledger, people, approvals, clientAuth, http, log); later issues add members inside a group,
 * not beside the groups. The gateway builds one context per channel account
 * (apps/gateway/src/channel-context.ts); tests build theirs from the same groups.
 */
export interface ChannelContext {
  /** The durable inbox: accept before acknowledging the platform. */
  readonly inbox: ChannelInbox;
  /** This account's delivery ledger (drafts and finals already delivered); see `DeliveryLedger` (delivery-ledger.ts). */
  readonly ledger: ChannelLedger;
  /** Who a sender is, and what a person may do to their own session. */
  readonly people: ChannelPeople;
  /** Pending approvals and their answers. */
  readonly approvals: ChannelApprovals;
  /** The chat commands (`/new`, `/status`, `/stop`, `/mode`): run here, formatted by the channel. */
  readonly commands: ChannelCommands;
  /**
   * Client-token authentication. Present only for channels that authenticate their own clients
   * (those that set {@link Channel.authenticatesClients}: WebSocket); absent for the others.
   */
  readonly clientAuth?: ChannelClientAuth;
  /** Routes on the gateway's HTTP server (webhooks, the WebSocket path). */
  readonly http: ChannelHttp;
  /** The channel's logger (a child bound to `channel: <id>`); secrets are redacted by the gateway's logger. */
  readonly log: Logger;
  /**
   * Frames for this channel's viewers on other replicas (several gateways on one PostgreSQL
   * database). Absent on a single gateway (SQLite): then there is nobody else to tell.
   */
  readonly fanout?: ChannelFanout;
  /**
   * Short-lived marks shared with the other replicas (a replay memory, a dedupe window). Absent on
   * a single gateway (SQLite): a channel keeps such marks in memory then.
   */
  readonly marks?: SharedMarks;
}

/**
 * The durable inbox.
 *
 * - When: {@link ChannelInbox.accept} every inbound item before acknowledging it to the platform
 *   (HTTP 200, a Socket Mode ack, advancing a poll offset).
 * - Guarantees: accept is idempotent on `dedupeKey` (a redelivery makes no second turn and answers
 *   `duplicate: true`); once it resolves the item is stored, the boundary gate has run and the
 *   sender was told where appropriate (`gate`).
 * - Must not: acknowledge an item whose accept rejected (unless it is dropped on purpose, logged,
 *   for an error that retrying cannot cure); try one item more than {@link ChannelInbox.maxAttempts} times.
 * - Errors: accept rejects when the item could not be stored (`SWB_E_SHUTTING_DOWN` while the
 *   gateway stops, inbox limits, storage errors): leave the item unacknowledged for redelivery, and
 *   after `maxAttempts` failures hand it to {@link ChannelInbox.deadLetter}.
 */
export interface ChannelInbox {
  /** Durably records the item (inbox) and queues its turn. Call before acknowledging the platform. */
  accept(message: InboundMessage): Promise<AcceptResult>;
  /**
   * How many times a channel tries to accept (store and process) one inbound item before it
   * dead-letters it (`limits.inboxMaxAttempts`).
   */
  readonly maxAttempts: number;
  /**
   * Records an item given up on as a dead letter (logged, counted, listed in the control API) so
   * the channel can move past it. The channel apologises to the sender itself, when it knows them.
   * Rejects when the dead letter could not be stored.
   */
  deadLetter(item: DeadLetterInput): Promise<void>;
  /** False once the gateway is shutting down: refuse new connections. Never throws. */
  accepting(): boolean;
  /** The agent ids a message may address ({@link InboundMessage.agentId}), the default first. Absent: only the default agent. */
  readonly agents?: readonly string[];
  /**
   * This account's durable cursors (a poll offset): stored in the gateway's database, so they
   * survive a restart and replicas on one database share them. Write a cursor only after every
   * item before it was accepted.
   */
  readonly cursors: ChannelCursors;
  /**
   * `leased` when replicas share this account (storage on PostgreSQL): `start` does not start the
   * account's {@link Channel.exclusiveReceiver}; the gateway does, while this replica holds its
   * lease. Absent or `direct`: `start` starts receiving, as a gateway alone does.
   */
  readonly receiving?: 'direct' | 'leased';
}

/**
 * Named cursors of one channel account, one text value per name (the gateway keys them
 * `<channel id>:<name>`, so one account never sees another's).
 *
 * - Guarantees: `set` resolves once the value is stored; `get` answers the last stored value, or
 *   null when none was stored.
 * - Errors: both reject on a storage error (the value is then unchanged or unknown: retry).
 */
export interface ChannelCursors {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
}

/**
 * The delivery ledger of this channel account: what was delivered for each turn, so a turn
 * resumed after a restart edits or deletes its recorded draft and never sends a recorded final
 * again, and reconnecting clients get the finals they missed. Implemented by `DeliveryLedger` (delivery-ledger.ts).
 *
 * - When: `begin` once per render, before the first platform call that the ledger decides on
 *   (a channel that only needs it at the end may begin there); record each part right after the
 *   platform took it. A channel whose clients replay finals from the ledger (WebSocket: by cursor)
 *   records the final first and sends it only when the record is new.
 * - Guarantees: recording is idempotent on (turn, part, kind): the first record wins and a repeat
 *   answers `existed: true` with that record; rows are never rewritten.
 * - Must not: record a final the platform refused (a resumed turn would skip it: it would be lost).
 * - Errors: every method rejects on a storage error; `begin` with `onReadError` reports a failed
 *   read there and starts the turn with an empty ledger instead.
 */
export interface ChannelLedger {
  /** Reads what earlier renders recorded for the turn; returns the turn's ledger (see {@link TurnLedger}). */
  begin(turnId: string, to: ConversationRef, opts?: { onReadError?(err: unknown): void }): Promise<TurnLedger>;
  /** Final parts delivered to one of this account's conversations with a ledger id above `cursor`, oldest first (replay). */
  finalsSince(conversationId: string, cursor: number): Promise<DeliveryRecord[]>;
}

/** One turn's slice of the ledger, from {@link ChannelLedger.begin}. The maps include what this render records. */
export interface TurnLedger {
  readonly turnId: string;
  readonly to: ConversationRef;
  /** Final parts recorded for the turn, by part number, in ledger order. Skip these on resume. */
  readonly finals: ReadonlyMap<number, DeliveryRecord>;
  /**
   * Draft parts recorded for the turn, by part number: part 0 is the streaming draft (edit it into
   * the answer, or delete it); channels may use other parts for their own messages (Slack: approvals).
   */
  readonly drafts: ReadonlyMap<number, DeliveryRecord>;
  /** Records a draft the platform took (its message id, when it has one). */
  recordDraft(part: number, platformMessageId: string | null, content: DeliveryContent): Promise<LedgerWrite>;
  /**
   * Records a final part the platform took. `existed`: it was recorded before (do not announce it
   * again). Mark the turn's last final part `last`: it is then stored together with the turn's end,
   * in one transaction (a channel that never marks it costs one extra write per turn, nothing else).
   */
  recordFinal(part: number, platformMessageId: string | null, content: DeliveryContent, opts?: { last?: boolean }): Promise<LedgerWrite>;
}

/** What one ledger write answers: the stored record (the earlier one if it existed). */
export interface LedgerWrite {
  record: DeliveryRecord;
  existed: boolean;
}

/** What a ledger row keeps of a delivered part (channels may add fields of their own, e.g. Slack's `thread`). */
export type DeliveryContent = NewDelivery['content'];

/**
 * People and their own sessions.
 *
 * - When: `principalFor` before acting for a sender that the channel did not authenticate itself;
 *   the session methods act on the session the (conversation, principal) pair resolves to.
 * - Guarantees: each change is done (stored, audited) before the promise resolves, so a message
 *   right after `resetSession` lands in the fresh session; role and scope limits are checked here
 *   (`setMode` answers `{ ok: false, reason }` rather than throwing); nothing returned is a secret.
 * - Must not: pass a principal id taken from platform input without resolving or authenticating it.
 * - Errors: reject on storage errors only.
 */
export interface ChannelPeople {
  /** The principal an identity (`telegram:<userId>`, `slack:<team>:<user>`, `ws:<tokenId>`) belongs to; null if unknown. */
  principalFor(identity: string): Promise<{ principalId: string; role: string } | null>;
  /** Changes a person's own session settings (queue mode); returns the effective settings. */
  updateSession(
    conversation: ConversationRef,
    principalId: string,
    patch: { queueMode?: 'followup' | 'steer' },
  ): Promise<{ sessionId: string; queueMode: 'followup' | 'steer' }>;
  /** Ends the conversation's live session: the next message starts an empty history. */
  resetSession(conversation: ConversationRef, principalId: string): Promise<void>;
  /** What `/status` shows: never a secret. */
  sessionStatus(conversation: ConversationRef, principalId: string): Promise<SessionStatus>;
  /** What `/context` shows for the person's session here: the next request's size, the window, the last compaction, what fills it. */
  contextReport(conversation: ConversationRef, principalId: string): Promise<ContextReport>;
  /** Changes the person's own session mode, within what their role and broader scopes allow. */
  setMode(conversation: ConversationRef, principalId: string, mode: string): Promise<{ ok: true; mode: string } | { ok: false; reason: string }>;
  /** Aborts the running turn of the conversation's session, if any (`/stop`); false when nothing ran. */
  stopRunning(conversation: ConversationRef, principalId: string): Promise<boolean>;
  /** The person's own model spend today and this month against their budget (`/usage`; docs/budgets.md). */
  usage(conversation: ConversationRef, principalId: string): Promise<PersonalUsage>;
  /** Aborts a running turn if it belongs to this conversation (user `abort`); false otherwise. */
  abortTurn(turnId: string, conversation: ConversationRef): Promise<boolean>;
  /**
   * Compacts the conversation's session now (`/compact [instructions]`): in a shared room session
   * only an owner or admin may; `busy` while a turn of it runs. Absent: the command answers `unavailable`.
   */
  compactSession?(conversation: ConversationRef, principalId: string, instructions: string): Promise<CompactSessionResult>;
  /**
   * The person's memories here (`/memory`): in a direct conversation their own and the agent's
   * team memory, in a room the team memory only; `forget` removes one they may remove (audited).
   * Absent: `/memory` answers `memory_unavailable`.
   */
  memories?: {
    list(conversation: ConversationRef, principalId: string): Promise<MemoryListing>;
    forget(conversation: ConversationRef, principalId: string, id: string): Promise<ForgetOutcome>;
  };
  /** The person's own profile (`/profile`; docs/instructions.md). Absent: the command answers `unavailable`. */
  profiles?: Pick<Storage['profiles'], 'get' | 'put'>;
}

/** What `/compact` did (see `TurnEngine.compact`), or why not. */
export type CompactSessionResult = ManualCompactResult | { outcome: 'admins_only' };

/**
 * Approvals as a chat shows them.
 *
 * - When: `pending` when a client comes back (show what still waits); `decide` when a person
 *   presses a button or sends a decision.
 * - Guarantees: `decide` checks who may approve and claims the approval atomically: of two
 *   concurrent answers one is `decided`, the other `already_decided`. Refusals are data
 *   (`forbidden`, `not_found`), not errors.
 * - Must not: decide for a principal the channel has not resolved or authenticated.
 * - Errors: reject on storage errors only.
 */
export interface ChannelApprovals {
  /**
   * The approvals still pending in this conversation whose turn has not ended, oldest first (all
   * of them, or those of one turn): what a client that comes back is shown again.
   */
  pending(conversation: ConversationRef, turnId?: string): Promise<PendingApproval[]>;
  /**
   * Answers an approval as a principal (chat buttons, frames): checked against who may approve,
   * claimed atomically. `choice` picks one of the approval's `choices` (a plan approval: the mode
   * to switch to); an answer that does not fit the approval is `invalid`.
   */
  decide(approvalId: string, decision: 'allow' | 'deny', always: boolean, by: { principalId: string }, choice?: string): Promise<ApprovalAnswer>;
}

/**
 * The chat commands, run by one core runner (`ChatCommands`, chat-commands.ts); the channel parses its
 * platform's syntax (`/mode@bot plan`, `/switchboard mode plan`) and formats the result.
 *
 * - When: for a message whose command name {@link ChannelCommands.has} knows; other commands go to
 *   the assistant as text.
 * - Guarantees: `run` resolves the sender, checks, and finishes the state change before it
 *   resolves; every outcome (not paired, refused, unknown) is a {@link ChatCommandResult}.
 * - Must not: send the result's data verbatim where it could carry a secret (it never does today:
 *   `/status` and `/context` hold settings, counts, a model name and times only; the WebSocket
 *   sends results as frames).
 * - Errors: `run` rejects on storage errors only; the channel answers with its own failure text.
 */
export interface ChannelCommands {
  /** The commands, in menu order (Telegram registers them with setMyCommands). */
  readonly list: readonly ChatCommandSpec[];
  /** Whether `name` (without the slash, any case) is one of the commands. */
  has(name: string): boolean;
  /** Runs one command for the sender; see {@link ChatCommandResult}. */
  run(input: ChatCommandInput): Promise<ChatCommandResult>;
}

/**
 * Client-token authentication, for channels whose clients present a gateway client token.
 *
 * - When: `verify` on every connection attempt (before the upgrade or on the first frame);
 *   `tokenActive` before acting on a frame of a long-lived connection; `onAccessChange` once at
 *   start (unsubscribe on stop).
 * - Guarantees: `verify` is constant-time and counts towards failed-auth rate limiting per
 *   address; access-change listeners are called synchronously when a token or principal loses
 *   access.
 * - Must not: keep a connection open after its token was revoked, expired or its principal removed.
 * - Errors: `verify` and `tokenActive` reject on storage errors only; `addressOf` never throws.
 */
export interface ChannelClientAuth {
  /**
   * Resolves a client token to its principal; null if unknown or revoked. Constant-time. With the
   * client's `address` (a key from {@link ChannelClientAuth.addressOf}), the attempt counts
   * towards failed-auth rate limiting from before the lookup, and a locked-out address gets
   * `{ lockedOut, retryAfterSec }` whatever the token.
   */
  verify(secret: string, address?: string): Promise<ClientTokenCheck>;
  /**
   * The key of the client behind a request: its socket address, or the address a trusted proxy
   * (`gateway.trustedProxies`) reports; IPv6 aggregated by /64. Rate limits and caps use this.
   */
  addressOf(req: IncomingMessage): string;
  /** Whether a client token (by id) is still valid: revoked tokens lose their open connections. */
  tokenActive(tokenId: string): Promise<boolean>;
  /** Subscribes to access changes (token revoked or expired, principal removed or demoted); returns the unsubscribe. */
  onAccessChange(listener: AccessListener): () => void;
  /**
   * The web chat's upgrade (the `default` WebSocket account, with the console enabled): null when
   * the request carries no console session cookie or does not come from the console's public origin
   * (then the cookie counts for nothing); else the member it authenticates, or the refusal to answer.
   */
  consoleSession?(req: IncomingMessage): Promise<ConsoleUpgradeCheck>;
}

/** The outcome of {@link ChannelClientAuth.consoleSession}. */
export type ConsoleUpgradeCheck =
  | { principalId: string; tokenId: string; sessionId: string }
  | { refused: { status: number; code: string; message: string } }
  | null;

/**
 * The gateway's HTTP server.
 *
 * - When: in `start`, before it resolves (the server listens after every channel started).
 * - Guarantees: the plugin is registered encapsulated: its content-type parsers and error
 *   handler apply to its own routes only.
 * - Must not: register routes outside the channel's own paths.
 * - Errors: rejects when the plugin fails to register (e.g. a duplicate route): start fails.
 */
export interface ChannelHttp {
  register(plugin: FastifyPluginAsync): Promise<void>;
  /**
   * Files offered for download at the gateway's `GET /files/{id}` (WebSocket `file` frames):
   * `put` shelves one for a principal and answers its unguessable id, URL and expiry; only that
   * principal's client tokens fetch it. Throws when the file is larger than the shelf holds.
   */
  readonly files?: Pick<FileShelf, 'put'>;
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
  /** The options an allow chooses between (a plan approval: modes, least trusted first); absent for an ordinary approval. */
  choices?: string[];
}

/** The outcome of answering an approval, as a chat shows it. */
export interface ApprovalAnswer {
  outcome: 'decided' | 'already_decided' | 'forbidden' | 'invalid' | 'not_found';
  /** `allowed`, `denied`, `expired` or `cancelled` once decided. */
  status?: string;
  decidedBy?: string;
  /** Why it was refused (forbidden, invalid). */
  reason?: string;
  tool?: string;
  /** The option an allow chose (an approval with choices). */
  choice?: string;
}

export interface SessionStatus {
  sessionId: string;
  model: string;
  mode: string;
  queueMode: string;
  entries: number;
  pendingApprovals: number;
  running: boolean;
  /** Set when the mode in force is `auto`: whether the classifier answers, or it was handed back to the person. */
  auto?: AutoModeStatus;
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

/** The outcome of {@link ChannelClientAuth.verify}. */
export type ClientTokenCheck = { principalId: string; tokenId: string } | { lockedOut: true; retryAfterSec: number } | null;

/**
 * A channel adapter: one account on one platform. It turns platform traffic into
 * {@link InboundMessage}s (through `ctx.inbox.accept`) and renders turns and notices back. The
 * gateway calls `start` once, then `render`/`notify` any number of times (concurrently, for
 * different conversations), and `stop` once or more at shutdown or reload.
 */
export interface Channel {
  /** `<type>:<account>`, e.g. `websocket:default`. */
  id: string;
  type: string;
  account: string;
  required: boolean;
  capabilities: ChannelCapabilities;
  /**
   * True for a channel that authenticates its own clients with gateway client tokens (WebSocket):
   * its context then carries {@link ChannelContext.clientAuth}.
   */
  readonly authenticatesClients?: boolean;
  /**
   * Contract: resolve once receiving; deliver every inbound item through ctx.inbox.accept (durable)
   * before acknowledging it; mount any HTTP routes with ctx.http.register. Rejects when the channel
   * cannot start at all (a required channel then stops the gateway).
   */
  start(ctx: ChannelContext): Promise<void>;
  health(): ChannelHealth;
  /** Idempotent; in-flight sends settle. `reason` is shown to connected clients where possible. */
  stop(reason?: 'shutdown' | 'reload'): Promise<void>;
  /**
   * Contract: ledger drafts and finals through ctx.ledger ({@link TurnLedger}); on resume edit or
   * delete a recorded draft and skip recorded finals. Consumes the events until they end. Must not
   * throw or reject: a failure is logged (and counted in health) inside the channel.
   */
  render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void>;
  /** Sends a notice from the gateway itself (pairing codes, refusals, rate limits). Must not throw. */
  notify(to: ConversationRef, text: string): Promise<void>;
  /**
   * How long an approval asked in this channel's conversations waits before it becomes a denial,
   * when shorter than `permissions.approvalTimeout` (the OpenAI channel's `approvalWait`: its
   * client holds an HTTP request open meanwhile), and the note the model and audit get then.
   */
  readonly approvalWait?: { readonly timeoutMs: number; readonly note: string };
  /**
   * Delivers a file to a conversation (the `send_file` tool) on behalf of a turn. Resolves with a
   * short description for the model once the platform took it; rejects with a message safe to
   * show when it did not. Absent on channels that cannot send files.
   */
  sendFile?(to: ConversationRef, file: OutboundFile, meta: SendFileMeta): Promise<string>;
  /**
   * The receiver only one replica may run per account at a time (Telegram long polling, Slack
   * Socket Mode), when this account has one. With {@link ChannelInbox.receiving} `leased`, `start`
   * leaves it paused and the gateway resumes it while this replica holds the lease
   * `receiver:<type>:<account>`, and pauses it when the lease is lost or released. Absent or
   * null: every replica receives (webhooks, Slack HTTP events, WebSocket).
   */
  exclusiveReceiver?(): ExclusiveReceiver | null;
}

/**
 * A receiver that runs on one replica per account (see {@link Channel.exclusiveReceiver}).
 * Sending (renders, notices, approval buttons) works on every replica whether or not it receives.
 */
export interface ExclusiveReceiver {
  /** Starts receiving (polling, the socket); idempotent while it runs. Never throws: failures show in `health()`. */
  resume(): void;
  /**
   * Stops receiving; resolves once no inbound item is between fetch and acceptance, so whatever was
   * not accepted is fetched again by the next holder (nothing acknowledged is lost). Idempotent.
   */
  pause(): Promise<void>;
}

/** Whose turn a {@link Channel.sendFile} call serves. */
export interface SendFileMeta {
  turnId: string;
  /** The person the turn answers (the only one who may download a WebSocket file), or null in a room without one. */
  principalId: string | null;
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
  /** Replaces the gateway's known secret values in text a channel shows (tool status lines); identity when absent. */
  scrub?(text: string): string;
}

/** The config key of a value and the environment variables it was read from (see {@link ChannelFactoryDeps.configSource}). */
export interface ConfigSource {
  key: string;
  variables: readonly string[];
}

/**
 * Builds one Channel per configured account from the validated account configs (keyed by
 * account id). It may import the channel's implementation, and the platform SDK with it, only
 * when called, so an unconfigured channel type costs nothing at start-up.
 */
export type ChannelFactory<A = unknown> = (accounts: Readonly<Record<string, A>>, deps: ChannelFactoryDeps) => Promise<Channel[]>;

/**
 * What every channel package exports (one per package, e.g. `telegramModule` from
 * `@switchboard/channel-telegram/module`, a subpath that loads no platform SDK). The gateway
 * composes the `channels` config from its modules: `channels.<type>.accounts.<id>` is parsed by
 * `accountSchema`, and `createChannels` gets the parsed accounts of its type (only when at least
 * one is configured).
 *
 * - `type` is the config key and every created Channel's `type`.
 * - `accountSchema` extends the core boundary keys (`channelAccountShape`, and `roomAccountShape`
 *   for platforms with rooms); its defaults are the only defaults: `createChannels` gets
 *   `z.output` values and re-applies none. Its messages name the key (the gateway prefixes the path).
 * - `createChannels` makes one Channel per account, in the accounts' order, and owns whatever the
 *   accounts of its type share (WebSocket: one upgrade handler). It throws only for an account that
 *   cannot work (a config error naming the key).
 * - `doctor` (optional) checks the accounts' credentials for `switchboard doctor` without
 *   starting a channel; see {@link ChannelDoctor} (doctor-check.ts).
 */
export interface ChannelModule<Type extends string = string, Schema extends z.ZodType = z.ZodType> {
  readonly type: Type;
  readonly accountSchema: Schema;
  createChannels(accounts: Readonly<Record<string, z.output<Schema>>>, deps: ChannelFactoryDeps): Promise<Channel[]>;
  /** `switchboard doctor`'s checks of this type's accounts; absent: the doctor checks nothing channel-specific for it. */
  readonly doctor?: ChannelDoctor<z.output<Schema>>;
}
