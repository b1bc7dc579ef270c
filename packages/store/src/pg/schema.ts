import { sql } from 'drizzle-orm';
import { type AnyPgColumn, bigint, boolean, customType, doublePrecision, index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

// The PostgreSQL twin of ../schema.ts and the source of truth for `migrations-pg/` (drizzle-kit
// generate --config drizzle.pg.config.ts). It mirrors the SQLite schema column for column so that
// `switchboard migrate-storage` copies rows unchanged and both engines share the row mappers:
// timestamps are bigint epoch ms, JSON columns are text. Tables SQLite orders by its implicit
// `rowid` get an explicit `rowid` identity column (docs/adr/0009-postgresql-storage.md).

/** SQLite's implicit rowid, made explicit: insertion order, the tie-breaker of `ORDER BY created_at, rowid`. */
const rowid = () => bigint('rowid', { mode: 'number' }).notNull().generatedByDefaultAsIdentity();

/** People (and bots) the gateway knows. */
export const principals = pgTable(
  'principals',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    role: text('role').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  // Unique because byName() is used for authorization look-ups: an ambiguous name would be a hole.
  (t) => [uniqueIndex('principals_name_uq').on(t.name)],
);

/** A principal's external ids, one per kind of channel. */
export const identities = pgTable(
  'identities',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    principalId: text('principal_id')
      .notNull()
      .references(() => principals.id),
    channelType: text('channel_type').notNull(),
    externalId: text('external_id').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('identities_channel_external_uq').on(t.channelType, t.externalId), index('identities_principal_idx').on(t.principalId)],
);

/** API tokens; only the sha256 of the secret is kept. */
export const tokens = pgTable(
  'tokens',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    secretHash: text('secret_hash').notNull(),
    kind: text('kind').notNull(),
    name: text('name').notNull(),
    principalId: text('principal_id').references(() => principals.id),
    scopes: text('scopes').notNull().default('[]'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    revokedAt: bigint('revoked_at', { mode: 'number' }),
    expiresAt: bigint('expires_at', { mode: 'number' }),
    lastUsedAt: bigint('last_used_at', { mode: 'number' }),
    createdBy: text('created_by'),
  },
  (t) => [uniqueIndex('tokens_secret_hash_uq').on(t.secretHash)],
);

/** Conversation sessions; at most one live (not ended) session per key. */
export const sessions = pgTable(
  'sessions',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    key: text('key').notNull(),
    agentId: text('agent_id').notNull(),
    channel: text('channel').notNull(),
    account: text('account').notNull(),
    scope: text('scope').notNull(),
    // No foreign key: the key comes from the router, and a session outlives its principal's rows.
    principalId: text('principal_id'),
    conversation: text('conversation'),
    thread: text('thread'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
    endedAt: bigint('ended_at', { mode: 'number' }),
    settings: text('settings').notNull().default('{}'),
  },
  (t) => [
    uniqueIndex('sessions_live_key_uq').on(t.key).where(sql`ended_at IS NULL`),
    index('sessions_updated_idx').on(t.updatedAt),
    index('sessions_principal_idx').on(t.principalId),
  ],
);

/** Append-only transcript entries, numbered per session from 1. */
export const entries = pgTable(
  'entries',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    // No foreign key: notes and compaction boundaries may carry ids that are not turns.
    turnId: text('turn_id'),
    kind: text('kind').notNull(),
    payload: text('payload').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.seq] }), index('entries_turn_idx').on(t.turnId)],
);

/** Durable inbound items; (channel, account, dedupe_key) is the platform's idempotency key. */
export const inbox = pgTable(
  'inbox',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    channel: text('channel').notNull(),
    account: text('account').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    payload: text('payload').notNull(),
    receivedAt: bigint('received_at', { mode: 'number' }).notNull(),
    turnId: text('turn_id').references((): AnyPgColumn => turns.id),
    /** Dead letters: set when the item could not be stored or processed after its attempts. */
    failedAt: bigint('failed_at', { mode: 'number' }),
    error: text('error'),
    attempts: bigint('attempts', { mode: 'number' }),
  },
  (t) => [uniqueIndex('inbox_dedupe_uq').on(t.channel, t.account, t.dedupeKey), index('inbox_failed_idx').on(t.failedAt)],
);

/** Turns: the persisted state machine of one inbound item's processing. */
export const turns = pgTable(
  'turns',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id),
    inboxId: text('inbox_id')
      .notNull()
      .references((): AnyPgColumn => inbox.id),
    state: text('state').notNull(),
    clientId: text('client_id'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
    reason: text('reason'),
    error: text('error'),
    usage: text('usage'),
  },
  (t) => [index('turns_state_idx').on(t.state), index('turns_session_state_idx').on(t.sessionId, t.state)],
);

/** The outbound delivery ledger; `id` is the monotonic replay cursor. */
export const deliveries = pgTable(
  'deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    // No foreign key: channel contract tests record parts for turns this store never queued.
    turnId: text('turn_id').notNull(),
    part: bigint('part', { mode: 'number' }).notNull(),
    kind: text('kind').notNull(),
    channel: text('channel').notNull(),
    account: text('account').notNull(),
    conversationId: text('conversation_id').notNull(),
    platformMessageId: text('platform_message_id'),
    content: text('content').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('deliveries_turn_part_kind_uq').on(t.turnId, t.part, t.kind),
    index('deliveries_conversation_idx').on(t.channel, t.account, t.conversationId, t.id),
  ],
);

/** Approval slots: one per (turn, tool_use); decided once, by an atomic claim. */
export const approvals = pgTable(
  'approvals',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    turnId: text('turn_id').notNull(),
    toolUseId: text('tool_use_id').notNull(),
    sessionId: text('session_id').notNull(),
    tool: text('tool').notNull(),
    summary: text('summary').notNull(),
    input: text('input').notNull(),
    requesterPrincipalId: text('requester_principal_id'),
    conversation: text('conversation').notNull(),
    status: text('status').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: bigint('decided_at', { mode: 'number' }),
    always: bigint('always', { mode: 'number' }).notNull().default(0),
    reason: text('reason'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    // Which pipeline step asked (mode | rule | safety | hook | sandbox). Rows from before the
    // column existed read `safety`: their source is unknown, so only people may answer them.
    source: text('source').notNull().default('safety'),
    // The rule "always allow" saves for this call (matches exactly it); null on older rows.
    alwaysRule: text('always_rule'),
    // The options an allow chooses between (JSON array; a plan approval's modes); null otherwise.
    choices: text('choices'),
    // The option the allow chose.
    choice: text('choice'),
  },
  (t) => [uniqueIndex('approvals_tool_use_uq').on(t.turnId, t.toolUseId), index('approvals_status_idx').on(t.status)],
);

/** Permission rules saved by operators or by "always allow". */
export const rules = pgTable('rules', {
  rowid: rowid(),
  id: text('id').primaryKey(),
  scopeKind: text('scope_kind').notNull(),
  scopeId: text('scope_id'),
  behavior: text('behavior').notNull(),
  rule: text('rule').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: bigint('created_at', { mode: 'number' }).notNull(),
});

/** Append-only audit log. */
export const audit = pgTable(
  'audit',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    at: bigint('at', { mode: 'number' }).notNull(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    target: text('target'),
    detail: text('detail').notNull(),
  },
  (t) => [index('audit_action_idx').on(t.action, t.id), index('audit_actor_idx').on(t.actor, t.id)],
);

/** Pairing requests of unknown DM senders (their held messages are rows of `pairing_held`). */
export const pairingRequests = pgTable(
  'pairing_requests',
  {
    rowid: rowid(),
    code: text('code').primaryKey(),
    channel: text('channel').notNull(),
    account: text('account').notNull(),
    identity: text('identity').notNull(),
    displayName: text('display_name'),
    conversation: text('conversation').notNull(),
    /** 1 once the sender was told that a message past `pairing.maxHeld` / `maxHeldBytes` was not kept. */
    overflowNotified: bigint('overflow_notified', { mode: 'number' }).notNull().default(0),
    status: text('status').notNull(),
    principalId: text('principal_id'),
    decidedBy: text('decided_by'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    uniqueIndex('pairing_pending_identity_uq').on(t.channel, t.account, t.identity).where(sql`status = 'pending'`),
    index('pairing_status_idx').on(t.status, t.expiresAt),
    index('pairing_identity_idx').on(t.channel, t.account, t.identity, t.createdAt),
  ],
);

/** Messages held for a pairing request, one row each, in arrival order (by id). */
export const pairingHeld = pgTable(
  'pairing_held',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    code: text('code')
      .notNull()
      .references(() => pairingRequests.code, { onDelete: 'cascade' }),
    dedupeKey: text('dedupe_key').notNull(),
    /** The InboundMessage as JSON. */
    message: text('message').notNull(),
    /** Stored size of `message` in bytes. */
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('pairing_held_code_dedupe_uq').on(t.code, t.dedupeKey)],
);

/** Operators' field-by-field overrides of channel boundary policies. */
export const policyOverrides = pgTable(
  'policy_overrides',
  {
    channelId: text('channel_id').notNull(),
    field: text('field').notNull(),
    value: text('value').notNull(),
    updatedBy: text('updated_by').notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.field] })],
);

/** One row per completed model call: who, where, which model, tokens by kind and cost (usage reports and budgets read these). */
export const usage = pgTable(
  'usage',
  {
    rowid: rowid(),
    id: text('id').primaryKey(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    // No foreign keys: usage rows outlive the turns, sessions and principals they count.
    turnId: text('turn_id').notNull(),
    sessionId: text('session_id').notNull(),
    principalId: text('principal_id'),
    agentId: text('agent_id').notNull(),
    /** `<type>:<account>`. */
    channel: text('channel').notNull(),
    model: text('model').notNull(),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
    cacheReadInputTokens: bigint('cache_read_input_tokens', { mode: 'number' }).notNull(),
    cacheCreationInputTokens: bigint('cache_creation_input_tokens', { mode: 'number' }).notNull(),
    /** input + cache read + cache write tokens: the request's size. */
    contextTokens: bigint('context_tokens', { mode: 'number' }).notNull(),
    costUsd: doublePrecision('cost_usd').notNull(),
  },
  (t) => [
    index('usage_created_idx').on(t.createdAt),
    index('usage_principal_idx').on(t.principalId, t.createdAt),
    index('usage_agent_idx').on(t.agentId, t.createdAt),
    index('usage_turn_idx').on(t.turnId),
  ],
);

/** Operators' budget overrides (control API `PUT /api/v1/budgets/…`): one per scope and id, over the configured `budgets`. */
export const budgetOverrides = pgTable(
  'budget_overrides',
  {
    /** `gateway`, `agent`, `role` or `principal`. */
    scope: text('scope').notNull(),
    /** The agent, role or principal id; `''` for the gateway. */
    scopeId: text('scope_id').notNull(),
    /** The `{ day?, month? }` budget, JSON. */
    spec: text('spec').notNull(),
    updatedBy: text('updated_by').notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.scopeId] })],
);

/** Operators' offer-switches (control API `PUT /capabilities/{id}` with `enabled: true`): a tool offered at a scope beyond its `offeredTo` roles. */
export const offerSwitches = pgTable(
  'offer_switches',
  {
    rowid: rowid(),
    tool: text('tool').notNull(),
    scopeKind: text('scope_kind').notNull(),
    /** The scope's id; `''` for the gateway. */
    scopeId: text('scope_id').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tool, t.scopeKind, t.scopeId] })],
);

/**
 * Long-term memories (`memory_save`): a person's private ones (`principal_id`) and each agent's
 * team memory (`agent_id`). Full-text search: `search` holds the text's and tags' words as the
 * repository folds them (lower case, no diacritics: see `searchDocument`), `tsv` is its tsvector
 * (`simple` configuration, GIN index), so both engines split words the same way.
 */
export const memories = pgTable(
  'memories',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    id: text('id').notNull(),
    /** `private` or `team`. */
    scope: text('scope').notNull(),
    /** Private memories: their person. */
    principalId: text('principal_id'),
    /** Team memories: their agent. */
    agentId: text('agent_id'),
    text: text('text').notNull(),
    /** JSON array of strings. */
    tags: text('tags').notNull(),
    /** The principal whose turn saved it. */
    createdBy: text('created_by'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    search: text('search').notNull(),
    tsv: tsvector('tsv').notNull().generatedAlwaysAs(sql`to_tsvector('simple'::regconfig, search)`),
  },
  (t) => [
    uniqueIndex('memories_id_uq').on(t.id),
    index('memories_principal_idx').on(t.principalId),
    index('memories_agent_idx').on(t.agentId),
    index('memories_tsv_idx').using('gin', t.tsv),
  ],
);

/** A person's profile (`/profile`, control API `PUT /principals/{id}/profile`): read into their turns' system prompt. Deleted with the principal. */
export const principalProfiles = pgTable('principal_profiles', {
  principalId: text('principal_id')
    .primaryKey()
    .references(() => principals.id, { onDelete: 'cascade' }),
  /** The profile's fields (`name`, `pronouns`, `timezone`, `language`, `preferences`), JSON. */
  fields: text('fields').notNull(),
  updatedBy: text('updated_by').notNull(),
  updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
});

/** The hash of each instruction file (`AGENTS.md`) a person approved or wrote through an approved file-tool write, per workspace file. */
export const instructionFiles = pgTable(
  'instruction_files',
  {
    /** The workspace directory (absolute). */
    workspace: text('workspace').notNull(),
    /** The file, relative to the workspace, `/`-separated. */
    path: text('path').notNull(),
    sha256: text('sha256').notNull(),
    approvedAt: bigint('approved_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspace, t.path] })],
);

/**
 * A subagent's transcript (a sidechain of a parent turn's `task` call): never part of the parent
 * session's entries, so never loaded into the parent's context. One row per `task` tool_use.
 */
export const sidechains = pgTable(
  'sidechains',
  {
    rowid: rowid(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    /** The parent's `task` tool_use id. */
    toolUseId: text('tool_use_id').notNull(),
    /** The parent turn. */
    turnId: text('turn_id').notNull(),
    /** The subagent type (`general` or a configured name). */
    type: text('type').notNull(),
    description: text('description').notNull(),
    /** `running` | `completed` | `failed` | `aborted` | `interrupted`. */
    state: text('state').notNull(),
    /** The subagent's messages (its prompt, its replies and tool results), JSON. */
    messages: text('messages').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.toolUseId] }), index('sidechains_turn_idx').on(t.turnId)],
);

/** Channel cursors that must survive a restart and be shared by replicas (the Telegram update offset). */
export const cursors = pgTable('cursors', {
  /** `<channel type>:<account>:<name>`, e.g. `telegram:default:offset`. */
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
});

/** Leases (issue 20): who runs a session's turns, polls an account, … — with a fencing number that grows on every change of hands. */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  owner: text('owner').notNull(),
  fence: bigint('fence', { mode: 'number' }).notNull(),
  /** Server time (epoch ms); lapsed when not after now. */
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  acquiredAt: bigint('acquired_at', { mode: 'number' }).notNull(),
});

/**
 * Channel frames staged for the viewers on other replicas (issue 20: a turn streams to a person's
 * WebSocket sockets on every replica). NOTIFY names a range of ids; rows older than
 * `storage.fanout.retention` are deleted.
 */
export const fanoutFrames = pgTable(
  'fanout_frames',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The replica that staged the row. */
    origin: text('origin').notNull(),
    /** The channel id (`websocket:<account>`). */
    channel: text('channel').notNull(),
    /** Whose sockets get the frames (a principal id). */
    audience: text('audience').notNull(),
    /** A JSON array of frames. */
    frames: text('frames').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('fanout_frames_created_idx').on(t.createdAt)],
);

/**
 * Short-lived marks replicas share (issue 20): the webhook channel's signed requests within their
 * replay window, the OpenAI channel's dedupe window. A mark whose `expires_at` passed is dead.
 */
export const sharedMarks = pgTable(
  'shared_marks',
  {
    key: text('key').primaryKey(),
    value: text('value').notNull(),
    /** Epoch ms. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('shared_marks_expires_idx').on(t.expiresAt)],
);

/**
 * The console's sign-in sessions when replicas share the database (issue 20): keyed by the sha256
 * of the cookie, never the cookie itself.
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    hash: text('hash').primaryKey(),
    /** The identity as JSON: `{ kind: 'operator', name, scopes }` or `{ kind: 'client', name, principalId, role }`. */
    identity: text('identity').notNull(),
    tokenId: text('token_id').notNull(),
    csrfToken: text('csrf_token').notNull(),
    /** Epoch ms. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('console_sessions_token_idx').on(t.tokenId), index('console_sessions_expires_idx').on(t.expiresAt)],
);

/**
 * The boundary's per-sender token buckets, shared by replicas (only PostgreSQL keeps them; SQLite
 * gateways keep them in memory). A row whose bucket is full again (`full_at` passed) carries
 * nothing and is swept.
 */
export const rateBuckets = pgTable(
  'rate_buckets',
  {
    /** `<channel id>|<sender identity>`. */
    key: text('key').primaryKey(),
    /** Tokens left at `at` (negative: debt from forced takes). */
    tokens: doublePrecision('tokens').notNull(),
    /** Epoch ms of the last take. */
    at: bigint('at', { mode: 'number' }).notNull(),
    /** Whether the sender was told about this empty spell. */
    warned: boolean('warned').notNull(),
    /** What the last take answered: `ok`, `limited` or `limited_warn` (read back by RETURNING). */
    outcome: text('outcome').notNull(),
    /** Epoch ms when the bucket is full again. */
    fullAt: bigint('full_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('rate_buckets_full_idx').on(t.fullAt)],
);

/**
 * Failed-auth windows per client address, shared by replicas (only PostgreSQL keeps them). A row
 * whose window and lockout are over (`expires_at` passed) carries nothing and is swept.
 */
export const authFailures = pgTable(
  'auth_failures',
  {
    /** The client address key (IPv4, IPv6 /64). */
    key: text('key').primaryKey(),
    /** Epoch ms of the failures within the window, oldest first. */
    failures: bigint('failures', { mode: 'number' }).array().notNull(),
    /** Epoch ms of the attempts admitted and not settled yet (they count as failures meanwhile). */
    pending: bigint('pending', { mode: 'number' }).array().notNull(),
    /** Epoch ms the lockout ends (0: none). */
    lockedUntil: bigint('locked_until', { mode: 'number' }).notNull(),
    /** What the last statement decided (`admitted`, `locked`, `busy`, `settled`, `lockout`; read back by RETURNING). */
    outcome: text('outcome').notNull(),
    /** Epoch ms after which the row carries nothing (every failure, attempt and lockout over). */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('auth_failures_expires_idx').on(t.expiresAt)],
);

/**
 * Concurrency slots replicas share (issue 20: `subagents.perGateway` counts across replicas): one
 * row per slot held, by the replica that holds it, lapsing unless renewed (a replica that dies
 * frees its slots at expiry).
 */
export const sharedSlots = pgTable(
  'shared_slots',
  {
    pool: text('pool').notNull(),
    id: text('id').notNull(),
    owner: text('owner').notNull(),
    /** Server time (epoch ms). */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.pool, t.id] })],
);
