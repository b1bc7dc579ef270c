import type { AcceptResult, ConversationRef, DeliveryRecord, InboundMessage, LedgerWrite, NewDelivery, TurnState } from './channel.js';
import type { SessionKey } from './session-key.js';
import type { AskSource } from '@switchboard/agent';
import type { DeadLetter, DeadLetterInput } from './dead-letters.js';
import type { NewUsageRecord, UsageFilter, UsageRecord, UsageReport } from './usage.js';
import type { BudgetOverride, BudgetScope, BudgetSpec, BudgetSpend, UsageChange } from './budgets/types.js';
import type { MemoryRepo } from './memory/types.js';
import type { SharedCounters } from './shared-counters.js';

export type Role = 'owner' | 'admin' | 'member' | 'guest';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'guest'];
export type Scope = 'read' | 'write' | 'admin' | 'approvals' | 'pairing';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin', 'approvals', 'pairing'];
export type TokenKind = 'client' | 'operator';

export interface Principal {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
}

export interface Identity {
  id: string;
  principalId: string;
  /** Kind of channel (`ws`, `telegram`, `slack`): identities are shared across a channel's accounts. */
  channelType: string;
  externalId: string;
  createdAt: Date;
}

export interface TokenRecord {
  id: string;
  kind: TokenKind;
  name: string;
  /** Client tokens belong to a principal; operator tokens do not. */
  principalId: string | null;
  /** Operator scopes; empty for client tokens. */
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  /** Refused from this moment on; null: never expires. */
  expiresAt: Date | null;
  /** Last accepted use, recorded at most once a minute per token; null: never used. */
  lastUsedAt: Date | null;
  /** Who minted it: the operator token's id (control API), `cli:<os user>`, or `bootstrap`; null for older tokens. */
  createdBy: string | null;
}

/** Per-session settings a person may change for themselves. */
export interface SessionSettings {
  queueMode?: 'followup' | 'steer';
  /** Permission mode for this session (may only lower trust; see the permission pipeline). */
  mode?: string;
  /** When `mode` was set above the broader scopes' mode (a session grant; epoch ms): it lapses after `permissions.sessionGrantTtl`. */
  modeGrantedAt?: number;
  /** Session grants that lapsed since the person's last turn: told at the start of their next one. */
  grantNotices?: string[];
  /** Set when auto mode handed the session back to people after repeated classifier blocks (epoch ms, why); cleared by setting `auto` again. */
  autoHandback?: { at: number; reason: string };
}

export interface Session {
  id: string;
  key: string;
  agentId: string;
  channel: string;
  account: string;
  scope: 'dm' | 'room';
  principalId: string | null;
  conversation: string | null;
  thread: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Set when the session was reset; a reset key resolves to a new session. */
  endedAt: Date | null;
  settings: SessionSettings;
}

export type EntryKind = 'user' | 'assistant' | 'tool_start' | 'tool_result' | 'note' | 'compact' | 'microcompact';

/** One transcript entry. `payload` is the kind's JSON (see docs/storage.md). */
export interface NewEntry {
  kind: EntryKind;
  turnId: string | null;
  payload: unknown;
}

export interface Entry extends NewEntry {
  sessionId: string;
  /** Per-session sequence number, from 1. */
  seq: number;
  createdAt: Date;
}

/** Token use of one turn, per model (a fallback shows up as a second model). */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  models: Record<string, { calls: number; inputTokens: number; outputTokens: number }>;
  retries: number;
  fallbackUsed: boolean;
}

/** What `turns.begin` and `turns.finish` wrote: the turn after the write and the entries as stored. */
export interface TurnWrite {
  turn: Turn;
  entries: Entry[];
  /** The ledger row of {@link TurnFinish.delivery}, when one was given. */
  delivery?: LedgerWrite;
}

/** The end of a turn as `turns.finish` records it. */
export interface TurnFinish {
  /** A final state, or `suspended` (shutdown: the turn resumes at the next start). */
  state: Extract<TurnState, 'completed' | 'failed' | 'interrupted' | 'suspended'>;
  reason?: string;
  error?: string;
  usage?: TurnUsage;
  /** Entries of the turn not stored yet, appended in the same transaction. */
  entries?: readonly NewEntry[];
  /** Usage rows of model calls not stored yet (see `NewUsageRecord`), in the same transaction. */
  calls?: readonly NewUsageRecord[];
  /**
   * The turn's last final part, recorded in the delivery ledger in the same transaction
   * (idempotent on turn, part and kind, as `deliveries.record`): see `TurnFinishes`.
   */
  delivery?: NewDelivery;
  /** The session lease this write presents (replicas on PostgreSQL): refused once another replica took it. */
  fence?: Fence;
}

/**
 * The token of a held session lease (`session:<id>`, issue 20): a transcript write that presents
 * it fails with `SWB_E_LEASE_LOST` once the lease changed hands or lapsed. SQLite ignores fences.
 */
export interface Fence {
  name: string;
  owner: string;
  /** Grows every time the lease changes hands. */
  fence: number;
}

/**
 * Session leases (issue 20, replicas on PostgreSQL): a session's turns run on the one replica that
 * holds `session:<id>`. Absent on SQLite (one gateway: no leases).
 */
export interface SessionLeaseStore {
  /** Takes the session's lease for `owner` for `ttlMs` (extends it when `owner` holds it); null while another replica holds it. */
  acquire(sessionId: string, owner: string, ttlMs: number): Promise<Fence | null>;
  /** Extends a held lease by `ttlMs`; null when it lapsed or changed hands. */
  renew(lease: Fence, ttlMs: number): Promise<Fence | null>;
  /** Lets a held lease lapse now (the next holder takes it at once). */
  release(lease: Fence): Promise<void>;
  /**
   * Sessions with work nobody holds: an unfinished turn that is not queued (a replica died or left
   * while running it), or a queued turn older than `queuedForMs`, and no live session lease — or a
   * live one of `owner`'s (a previous process of this replica, restarted under its stable id).
   */
  orphans(queuedForMs: number, owner: string): Promise<string[]>;
}

/** What `turns.summary` answers. */
export interface TurnSummary {
  byState: Record<string, number>;
  usage: { turns: number; inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number };
}

export interface Turn {
  id: string;
  sessionId: string;
  inboxId: string;
  state: TurnState;
  /** The channel's correlation id (WebSocket client id); null when the channel has none. */
  clientId: string | null;
  createdAt: Date;
  updatedAt: Date;
  reason: string | null;
  error: string | null;
  usage: TurnUsage | null;
}

export interface InboxItem {
  id: string;
  channel: string;
  account: string;
  dedupeKey: string;
  message: InboundMessage;
  receivedAt: Date;
  turnId: string | null;
}

/** `cancelled`: the turn that asked ended (stopped, failed) before anyone decided. */
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled';

/** A persisted decision slot for one tool call that needs a person (or a hook) to decide. */
export interface Approval {
  id: string;
  turnId: string;
  toolUseId: string;
  sessionId: string;
  tool: string;
  /** What the tool would do, secrets redacted. */
  summary: string;
  input: unknown;
  requesterPrincipalId: string | null;
  conversation: ConversationRef;
  status: ApprovalStatus;
  /** `principal:<id>`, `operator:<tokenName>`, `hook:<name>` or `system` (expiry). */
  decidedBy: string | null;
  decidedAt: Date | null;
  /** The decider chose "always allow": a rule was saved. */
  always: boolean;
  reason: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Which pipeline step asked; only `mode` asks may be answered automatically (hooks). */
  source: AskSource;
  /** The rule "always allow" saves: it matches exactly this call. `null` on approvals stored before it was recorded. */
  alwaysRule: string | null;
  /**
   * The options an allow may choose between (a plan approval: the modes the person may switch to,
   * least trusted first); `null` for an ordinary approval.
   */
  choices: string[] | null;
  /** The option the allow chose (one of `choices`); `null` otherwise. */
  choice: string | null;
}

export type NewApproval = Omit<Approval, 'id' | 'status' | 'decidedBy' | 'decidedAt' | 'always' | 'reason' | 'createdAt' | 'choices' | 'choice'> & {
  choices?: readonly string[] | null;
};

/** A permission rule an operator or an approval saved (config rules are not stored). */
export interface StoredRule {
  id: string;
  scopeKind: 'gateway' | 'agent' | 'channel' | 'conversation' | 'role' | 'principal' | 'session';
  scopeId: string | null;
  behavior: 'allow' | 'ask' | 'deny';
  rule: string;
  createdBy: string;
  createdAt: Date;
}

/**
 * An operator's offer-switch: the tool is offered to the model wherever this scope applies, even
 * to roles outside its `offeredTo` defaults. Not a permission rule: it grants no call (approvals
 * still apply) and deny rules still hide the tool. One per tool and scope.
 */
/** What a person tells the assistant about themselves (every field optional, plain text). */
export interface Profile {
  name?: string;
  pronouns?: string;
  /** An IANA time zone: drives the date and time stamped into the person's turns. */
  timezone?: string;
  language?: string;
  preferences?: string;
}

/** A stored profile with who changed it last. */
export interface StoredProfile {
  profile: Profile;
  updatedBy: string;
  updatedAt: Date;
}

export interface OfferSwitch {
  /** The tool's name (a capability id). */
  tool: string;
  scopeKind: StoredRule['scopeKind'];
  /** The agent, channel, conversation, role, principal or session id; null for the gateway. */
  scopeId: string | null;
  createdBy: string;
  createdAt: Date;
}

export interface AuditEntry {
  id: number;
  at: Date;
  /** Who acted: `operator:<token name>`, `principal:<id>`, `hook:<name>`, `gateway`. */
  actor: string;
  action: string;
  target: string | null;
  detail: unknown;
}

export type PairingStatus = 'pending' | 'approved' | 'rejected' | 'expired';

/** An unknown DM sender's request for access, with the messages held until it is decided. */
export interface PairingRequest {
  code: string;
  channel: string;
  account: string;
  /** `telegram:<userId>`, … */
  identity: string;
  displayName: string | null;
  conversation: ConversationRef;
  /** How many messages are held (rows of `pairing_held`); load them with `pairing.held(code)`. */
  heldCount: number;
  /** Their stored size in bytes. */
  heldBytes: number;
  status: PairingStatus;
  principalId: string | null;
  decidedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** A new pairing request of an unknown sender, with its first message. */
export interface NewPairingRequest {
  code: string;
  channel: string;
  account: string;
  identity: string;
  displayName: string | null;
  conversation: ConversationRef;
  message: InboundMessage;
  expiresAt: Date;
}

/** The bounds `pairing.requestOrHold` keeps (config `pairing.*`). */
export interface PairingLimits {
  maxPending: number;
  maxHeld: number;
  maxHeldBytes: number;
  /** Milliseconds between two requests of one identity at least. */
  cooldown: number;
}

/** What `pairing.requestOrHold` did with a message. */
export type PairingOutcome =
  /** A new request; `kept` is false when its first message alone is over `maxHeldBytes`. */
  | { kind: 'created'; request: PairingRequest; evicted: PairingRequest | null; kept: boolean }
  | { kind: 'held'; request: PairingRequest }
  /** The request already holds a message with this dedupe key: nothing changed. */
  | { kind: 'duplicate'; request: PairingRequest }
  /**
   * Not kept: the request is at `maxHeld` or `maxHeldBytes` (or an earlier message was not kept:
   * from then on none is). `first` is true once per request.
   */
  | { kind: 'overflow'; request: PairingRequest; limit: 'maxHeld' | 'maxHeldBytes'; first: boolean }
  /** Not kept: this identity's last request is younger than `cooldown`. */
  | { kind: 'cooldown'; retryAt: Date };

/** An operator's override of one boundary field of one channel account. */
export interface PolicyOverride {
  channelId: string;
  field: string;
  value: unknown;
  updatedBy: string;
  updatedAt: Date;
}

export interface SessionFilter {
  principalId?: string;
  channel?: string;
  limit?: number;
  offset?: number;
}

/**
 * The gateway's storage, as small repositories. Every method that writes several rows does so
 * in one transaction. Implementations: SQLite and PostgreSQL (packages/store), one contract suite.
 */
/** How a sidechain (a subagent's run) stands. */
export type SidechainState = 'running' | 'completed' | 'failed' | 'aborted' | 'interrupted';

/** A subagent's transcript, linked to the parent session, turn and `task` tool_use. */
export interface Sidechain {
  sessionId: string;
  toolUseId: string;
  turnId: string;
  type: string;
  description: string;
  state: SidechainState;
  /** The subagent's messages in Messages API form (its prompt first). */
  messages: unknown[];
  createdAt: Date;
  updatedAt: Date;
}

export interface Storage {
  principals: {
    create(p: { name: string; role: Role }): Promise<Principal>;
    get(id: string): Promise<Principal | null>;
    byName(name: string): Promise<Principal | null>;
    list(): Promise<Principal[]>;
    count(): Promise<number>;
    linkIdentity(principalId: string, channelType: string, externalId: string): Promise<Identity>;
    byIdentity(channelType: string, externalId: string): Promise<Principal | null>;
    identities(principalId: string): Promise<Identity[]>;
    /**
     * Renames a principal and/or changes its role; null when there is no such principal.
     * @throws when `name` is taken by another principal (names are unique).
     */
    update(id: string, patch: { name?: string; role?: Role }): Promise<Principal | null>;
    /** Unlinks one identity of this principal; false when it was not linked to it. */
    unlinkIdentity(principalId: string, channelType: string, externalId: string): Promise<boolean>;
    /**
     * Deletes a principal in one transaction: its identities are unlinked, its tokens revoked and
     * detached (the records stay for the audit trail), then the principal row goes. Sessions and
     * transcripts are kept. Null when there is no such principal.
     */
    remove(id: string): Promise<{ identities: number; tokens: number } | null>;
  };
  tokens: {
    /** Stores only `secretHash` (sha256 hex of the secret). */
    create(t: {
      kind: TokenKind;
      name: string;
      principalId: string | null;
      scopes: Scope[];
      secretHash: string;
      expiresAt?: Date | null;
      createdBy?: string | null;
    }): Promise<TokenRecord>;
    byHash(secretHash: string): Promise<TokenRecord | null>;
    get(id: string): Promise<TokenRecord | null>;
    list(): Promise<TokenRecord[]>;
    revoke(id: string): Promise<boolean>;
    /** Records a use at `at` unless one was recorded less than `minIntervalMs` before; true if written. */
    touch(id: string, at: Date, minIntervalMs: number): Promise<boolean>;
  };
  sessions: {
    /** The live session for a key, created if none. */
    resolve(key: SessionKey): Promise<Session>;
    get(id: string): Promise<Session | null>;
    list(filter?: SessionFilter): Promise<Session[]>;
    /** Appends in one transaction, numbering entries after the session's last seq (refused when `fence` is not held: see {@link Fence}). */
    append(sessionId: string, entries: NewEntry[], fence?: Fence): Promise<Entry[]>;
    load(sessionId: string): Promise<Entry[]>;
    /**
     * What the model's view of the session is built from, in order: with a `compact` boundary,
     * the last boundary, the entries after its `throughSeq` and the entries of the boundary's
     * turn (so a long session is not re-read whole every turn); without one, everything.
     * Optional: without it the transcript cache loads everything and drops what precedes the boundary.
     */
    loadFromBoundary?(sessionId: string): Promise<Entry[]>;
    /** Entries of one turn, in order. */
    loadTurn(turnId: string): Promise<Entry[]>;
    /** Ends the live session of this key; the next resolve creates a fresh one. */
    reset(key: SessionKey): Promise<void>;
    /** Merges `patch` into the session's settings (a key set to null is removed); returns the session. */
    updateSettings(sessionId: string, patch: { [K in keyof SessionSettings]?: SessionSettings[K] | null }): Promise<Session>;
    /** Ends one session by id (like {@link reset} for its key); false when unknown or already ended. */
    end(sessionId: string): Promise<boolean>;
    /**
     * Ends a session and deletes its content in one transaction: transcript entries, the delivery
     * ledger rows of its turns, the text of its inbox items (the rows and dedupe keys stay, so a
     * redelivered platform message is still recognised) and the inputs of its decided approvals.
     * Turn records (state, usage), approval decisions and the audit log are kept.
     * Null when there is no such session.
     */
    purge(sessionId: string): Promise<{ entries: number; deliveries: number } | null>;
  };
  turns: {
    /**
     * One transaction: inbox row (unique on channel, account, dedupeKey), session resolve, and a
     * `queued` turn. A duplicate returns the existing item and its turn, changing nothing.
     */
    accept(message: InboundMessage, route: { key: SessionKey; clientId: string | null }): Promise<AcceptResult>;
    get(id: string): Promise<Turn | null>;
    /** Turns not in a final state, oldest first (start-up resumption and lanes). */
    unfinished(): Promise<Turn[]>;
    /** The oldest queued turn of a session. */
    nextQueued(sessionId: string): Promise<Turn | null>;
    /**
     * Marks the turn running, appends `entries` (its user entry, and whatever else must be
     * durable before the turn goes on) and records `calls` (usage rows of completed model calls)
     * — one transaction. Returns the turn and the entries as stored (numbered after the
     * session's last seq).
     */
    begin(turnId: string, entries: readonly NewEntry[], calls?: readonly NewUsageRecord[], fence?: Fence): Promise<TurnWrite>;
    /**
     * For a begun turn: appends `entries` to its session and records `calls` — one transaction.
     * Returns the entries as stored.
     */
    append(turnId: string, entries: readonly NewEntry[], calls?: readonly NewUsageRecord[], fence?: Fence): Promise<Entry[]>;
    /**
     * Ends (or suspends) a turn in one transaction: appends `entries` (what the turn has not stored
     * yet), sets the state, reason, error and usage, and records `delivery` (the last final part)
     * in the ledger. A turn never begun durably goes straight from `queued` to its end. Returns the
     * turn, the entries as stored and the ledger row.
     */
    finish(turnId: string, end: TurnFinish): Promise<TurnWrite>;
    /** A state change on its own (awaiting an approval and back): reason and error are replaced, usage kept unless given. */
    setState(turnId: string, state: TurnState, info?: { reason?: string; error?: string; usage?: TurnUsage }): Promise<void>;
    /**
     * Steer: appends `entries` (the absorbed messages, each under its own turn id) to the session
     * and marks those queued turns `completed` with reason `steered` — one transaction. Returns
     * the entries as stored.
     */
    absorb(sessionId: string, turnIds: string[], entries: NewEntry[], fence?: Fence): Promise<Entry[]>;
    /** Marks every running / awaiting_approval turn `suspended` (shutdown); returns how many. */
    suspendActive(): Promise<number>;
    inbox(inboxId: string): Promise<InboxItem | null>;
    /**
     * The stored item with this dedupe key, as `accept` would report a duplicate; null if new. With
     * `text`, the result says whether the stored item's text is the same (`sameText`).
     */
    seen(channel: string, account: string, dedupeKey: string, text?: string): Promise<AcceptResult | null>;
    /** Turns created since `since`: how many per state, and their summed token use. */
    summary(since: Date): Promise<TurnSummary>;
  };
  deadLetters: {
    /**
     * Records an inbound item given up on (an inbox row with `failed_at`, the error and the
     * attempts); an existing row with that dedupe key and no turn is marked failed instead.
     */
    record(item: DeadLetterInput): Promise<{ id: string; existed: boolean }>;
    /** Newest first. */
    list(opts?: { limit?: number; channel?: string }): Promise<DeadLetter[]>;
    count(): Promise<number>;
  };
  deliveries: {
    /** Idempotent on (turnId, part, kind): an existing record is returned with existed = true. */
    record(d: NewDelivery): Promise<{ record: DeliveryRecord; existed: boolean }>;
    ofTurn(turnId: string): Promise<DeliveryRecord[]>;
    /** Final parts of a conversation with id > cursor, oldest first. */
    finalsSince(channel: string, account: string, conversationId: string, cursor: number): Promise<DeliveryRecord[]>;
    /** Deletes a ledger row (a draft that was deleted on the platform during resume). */
    remove(id: number): Promise<void>;
  };
  pairing: {
    /**
     * For an unknown sender, in one transaction: the pending request of this identity gets the
     * message held (no new code) while it is within `maxHeld` messages and `maxHeldBytes`; else
     * a new request with `code` — unless this identity's last request was created less than
     * `cooldown` ago. When the account already has `maxPending` pending requests, the oldest
     * expires to make room (returned as `evicted`, with status `expired`).
     */
    requestOrHold(r: NewPairingRequest, limits: PairingLimits): Promise<PairingOutcome>;
    /** The request (any status) of this identity that holds a message with this dedupe key, if any. */
    heldSeen(channel: string, account: string, identity: string, dedupeKey: string): Promise<PairingRequest | null>;
    /** The messages held by a request, in arrival order; answered on approval, discarded otherwise. */
    held(code: string): Promise<InboundMessage[]>;
    /** Blanks the content of an approved request's held messages once answered (their dedupe keys stay). */
    forgetHeld(code: string): Promise<void>;
    get(code: string): Promise<PairingRequest | null>;
    list(filter?: { status?: PairingStatus; channel?: string; account?: string }): Promise<PairingRequest[]>;
    /**
     * Decides a pending request (atomic like approvals); true only for the caller that decided it.
     * A rejected or expired request's held messages are deleted (discarded).
     */
    decide(code: string, status: Exclude<PairingStatus, 'pending'>, by: string, principalId?: string | null): Promise<boolean>;
    /** Pending requests whose expiry has passed. */
    expired(now: Date): Promise<PairingRequest[]>;
  };
  policies: {
    list(channelId?: string): Promise<PolicyOverride[]>;
    set(channelId: string, field: string, value: unknown, by: string): Promise<void>;
    remove(channelId: string, field: string): Promise<boolean>;
  };
  approvals: {
    /** Creates the approval for (turnId, toolUseId), or returns the existing one (a resumed turn). */
    create(a: NewApproval): Promise<{ approval: Approval; existed: boolean }>;
    get(id: string): Promise<Approval | null>;
    /**
     * Decides a pending approval: one `UPDATE … WHERE id = ? AND status = 'pending'`. True only
     * for the single caller whose update changed the row; every other caller gets false.
     */
    claim(id: string, status: Exclude<ApprovalStatus, 'pending'>, by: string, opts?: { always?: boolean; reason?: string; choice?: string }): Promise<boolean>;
    list(filter?: { status?: ApprovalStatus; sessionId?: string; principalId?: string; turnId?: string; limit?: number; offset?: number }): Promise<Approval[]>;
  };
  rules: {
    list(): Promise<StoredRule[]>;
    create(r: Omit<StoredRule, 'id' | 'createdAt'>): Promise<StoredRule>;
    delete(id: string): Promise<boolean>;
  };
  audit: {
    /** Appends an entry; returns its id. */
    append(e: { actor: string; action: string; target?: string | null; detail?: unknown }): Promise<number>;
    /**
     * Replaces the detail of an aggregated entry (a count over a window, e.g. `gate.rate_limited`)
     * while its window is open; other entries are never changed. False when there is no such entry.
     */
    updateDetail(id: number, detail: unknown): Promise<boolean>;
    list(filter?: { action?: string; actor?: string; since?: Date; limit?: number; offset?: number }): Promise<AuditEntry[]>;
  };
  /** One row per completed model call (see `NewUsageRecord`); budgets and reports read these. */
  usage: {
    /** Writes one call's row at once (on its own, not with the turn's end: a crash must not lose it). */
    record(r: NewUsageRecord): Promise<UsageRecord>;
    /** Sums the rows `filter` matches: totals and a per-UTC-day series. */
    report(filter?: UsageFilter): Promise<UsageReport>;
    /**
     * What the rows of one principal, one agent or (empty filter) everyone spent since `since.day`
     * and since `since.month` (tokens: input + output + cache read + cache write; USD), in one
     * indexed read. Budgets call it before every model call.
     */
    spend(
      filter: { principalId?: string; agentId?: string },
      since: { day: Date; month: Date },
      throughSeq?: number,
    ): Promise<{ day: BudgetSpend; month: BudgetSpend }>;
    /**
     * The rows stored after sequence number `afterSeq` (insertion order, at most `limit`) and the
     * last sequence number they reach; `afterSeq` null: no rows, just the last sequence number
     * stored. Budgets keep running sums with it (`throughSeq` of {@link spend} seeds them).
     */
    changes(afterSeq: number | null, limit?: number): Promise<{ rows: UsageChange[]; last: number }>;
  };
  /** Operators' budget overrides (control API), one per scope and id (`''` for the gateway). */
  budgets: {
    list(): Promise<BudgetOverride[]>;
    /** Replaces the override of (scope, id); null removes it. */
    set(scope: BudgetScope, id: string, spec: BudgetSpec | null, by: string): Promise<void>;
  };
  /** Operators' offer-switches (control API `PUT /capabilities/{id}` with `enabled: true`), one per tool and scope. */
  offerSwitches: {
    /** Every switch, oldest first. */
    list(): Promise<OfferSwitch[]>;
    /** Stores the switch of `tool` at exactly that scope unless one is there; true when it was stored. */
    put(s: Omit<OfferSwitch, 'createdAt'>): Promise<boolean>;
    /** Removes the switch of `tool` at exactly that scope; false when there was none. */
    remove(tool: string, scopeKind: OfferSwitch['scopeKind'], scopeId: string | null): Promise<boolean>;
  };
  /** Long-term memories: people's private ones and agents' team memory, with full-text search (see docs/memory.md). */
  memories: MemoryRepo;
  /** People's profiles (`/profile`, control API), one per principal; deleted with the principal. */
  profiles: {
    get(principalId: string): Promise<StoredProfile | null>;
    /** Replaces the profile of an existing principal (an empty one removes it); false when the principal does not exist. */
    put(principalId: string, profile: Profile, by: string): Promise<boolean>;
  };
  /** The approved hash of each instruction file (`AGENTS.md`) per workspace file (docs/instructions.md). */
  instructionFiles: {
    /** The sha256 (hex) last approved for `path` (workspace-relative, `/`-separated) in `workspace`; null when none. */
    approved(workspace: string, path: string): Promise<string | null>;
    /** Records `sha256` as the approved content of that file (replacing what was there). */
    approve(workspace: string, path: string, sha256: string): Promise<void>;
  };
  /** Subagent transcripts (sidechains of `task` calls), never part of the parent session's entries (docs/subagents.md). */
  sidechains: {
    /** Records a new running sidechain; false when one exists for that tool_use already (it is not replaced). */
    start(s: Pick<Sidechain, 'sessionId' | 'toolUseId' | 'turnId' | 'type' | 'description' | 'messages'>): Promise<boolean>;
    /** Replaces a sidechain's messages and state. */
    save(sessionId: string, toolUseId: string, messages: readonly unknown[], state: SidechainState): Promise<void>;
    get(sessionId: string, toolUseId: string): Promise<Sidechain | null>;
    /** A session's sidechains, oldest first. */
    list(sessionId: string): Promise<Sidechain[]>;
    /**
     * Marks `running` sidechains `interrupted` (nothing runs them any more): every one (start-up of
     * a single gateway), or those of `turnIds` (replicas: turns another replica left); returns how many.
     */
    interruptRunning(turnIds?: readonly string[]): Promise<number>;
  };
  /** Channel cursors that survive a restart (the Telegram update offset), one text value per key. */
  cursors: {
    get(key: string): Promise<string | null>;
    /** Stores `value` under `key` (replacing what was there). */
    set(key: string, value: string): Promise<void>;
  };
  /**
   * Rate-limit buckets and failed-auth windows shared by every gateway on this database: present
   * on PostgreSQL (replicas), absent on SQLite (one process keeps them in memory).
   */
  readonly counters?: SharedCounters;
  /** Which engine stores the data. */
  readonly engine: 'sqlite' | 'postgres';
  /** Session leases between replicas (PostgreSQL); absent on SQLite. */
  sessionLeases?: SessionLeaseStore;
  /**
   * Whether the database answers now (`/readyz`): one trivial round trip, bounded by the pool's
   * connection timeout. Never throws.
   */
  ping(): Promise<{ ok: true } | { ok: false; error: string }>;
  /** Releases the database (a PostgreSQL pool ends its connections; awaiting it is optional for SQLite). */
  close(): void | Promise<void>;
}
