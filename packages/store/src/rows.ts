import type {
  DeliveryRecord,
  Entry,
  EntryKind,
  Identity,
  InboundMessage,
  InboxItem,
  Principal,
  Role,
  Scope,
  Session,
  TokenKind,
  TokenRecord,
  Turn,
  TurnState,
} from '@switchboard/core';

// Raw better-sqlite3 rows (snake_case, as in migrations/) and their mapping to the core types.

/** A `principals` row. */
export interface PrincipalRow {
  id: string;
  name: string;
  role: string;
  created_at: number;
}

/** An `identities` row. */
export interface IdentityRow {
  id: string;
  principal_id: string;
  channel_type: string;
  external_id: string;
  created_at: number;
}

/** A `tokens` row. */
export interface TokenRow {
  id: string;
  secret_hash: string;
  kind: string;
  name: string;
  principal_id: string | null;
  scopes: string;
  created_at: number;
  revoked_at: number | null;
  expires_at: number | null;
  last_used_at: number | null;
  created_by: string | null;
}

/** A `sessions` row. */
export interface SessionRow {
  id: string;
  key: string;
  agent_id: string;
  channel: string;
  account: string;
  scope: string;
  principal_id: string | null;
  conversation: string | null;
  thread: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  settings: string;
}

/** An `entries` row. */
export interface EntryRow {
  session_id: string;
  seq: number;
  turn_id: string | null;
  kind: string;
  payload: string;
  created_at: number;
}

/** A `turns` row. */
export interface TurnRow {
  id: string;
  session_id: string;
  inbox_id: string;
  state: string;
  client_id: string | null;
  created_at: number;
  updated_at: number;
  reason: string | null;
  error: string | null;
  usage: string | null;
}

/** An `inbox` row. */
export interface InboxRow {
  id: string;
  channel: string;
  account: string;
  dedupe_key: string;
  payload: string;
  received_at: number;
  turn_id: string | null;
}

/** A `deliveries` row. */
export interface DeliveryRow {
  id: number;
  turn_id: string;
  part: number;
  kind: string;
  channel: string;
  account: string;
  conversation_id: string;
  platform_message_id: string | null;
  content: string;
  created_at: number;
}

const date = (ms: number): Date => new Date(ms);
const maybeDate = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** Maps a principals row. */
export const toPrincipal = (r: PrincipalRow): Principal => ({
  id: r.id,
  name: r.name,
  role: r.role as Role,
  createdAt: date(r.created_at),
});

/** Maps an identities row. */
export const toIdentity = (r: IdentityRow): Identity => ({
  id: r.id,
  principalId: r.principal_id,
  channelType: r.channel_type,
  externalId: r.external_id,
  createdAt: date(r.created_at),
});

/** Maps a tokens row (the secret hash stays in the database). */
export const toToken = (r: TokenRow): TokenRecord => ({
  id: r.id,
  kind: r.kind as TokenKind,
  name: r.name,
  principalId: r.principal_id,
  scopes: JSON.parse(r.scopes) as Scope[],
  createdAt: date(r.created_at),
  revokedAt: maybeDate(r.revoked_at),
  expiresAt: maybeDate(r.expires_at),
  lastUsedAt: maybeDate(r.last_used_at),
  createdBy: r.created_by,
});

/** Maps a sessions row. */
export const toSession = (r: SessionRow): Session => ({
  id: r.id,
  key: r.key,
  agentId: r.agent_id,
  channel: r.channel,
  account: r.account,
  scope: r.scope as Session['scope'],
  principalId: r.principal_id,
  conversation: r.conversation,
  thread: r.thread,
  createdAt: date(r.created_at),
  updatedAt: date(r.updated_at),
  endedAt: maybeDate(r.ended_at),
  settings: JSON.parse(r.settings) as Session['settings'],
});

/** Maps an entries row, parsing its JSON payload. */
export const toEntry = (r: EntryRow): Entry => ({
  sessionId: r.session_id,
  seq: r.seq,
  turnId: r.turn_id,
  kind: r.kind as EntryKind,
  payload: JSON.parse(r.payload) as unknown,
  createdAt: date(r.created_at),
});

/** Maps a turns row. */
export const toTurn = (r: TurnRow): Turn => ({
  id: r.id,
  sessionId: r.session_id,
  inboxId: r.inbox_id,
  state: r.state as TurnState,
  clientId: r.client_id,
  createdAt: date(r.created_at),
  updatedAt: date(r.updated_at),
  reason: r.reason,
  error: r.error,
  usage: r.usage === null ? null : (JSON.parse(r.usage) as Turn['usage']),
});

/** Maps an inbox row; the stored message's `receivedAt` comes back as a Date. */
export const toInboxItem = (r: InboxRow): InboxItem => {
  const parsed = JSON.parse(r.payload) as Omit<InboundMessage, 'receivedAt'> & { receivedAt: string };
  return {
    id: r.id,
    channel: r.channel,
    account: r.account,
    dedupeKey: r.dedupe_key,
    message: { ...parsed, receivedAt: new Date(parsed.receivedAt) },
    receivedAt: date(r.received_at),
    turnId: r.turn_id,
  };
};

/** Maps a deliveries row, parsing its JSON content. */
export const toDelivery = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id,
  turnId: r.turn_id,
  part: r.part,
  kind: r.kind as DeliveryRecord['kind'],
  channel: r.channel,
  account: r.account,
  conversationId: r.conversation_id,
  platformMessageId: r.platform_message_id,
  content: JSON.parse(r.content) as DeliveryRecord['content'],
  createdAt: date(r.created_at),
});
