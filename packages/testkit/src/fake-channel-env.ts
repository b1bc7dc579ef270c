import { randomUUID } from 'node:crypto';
import type {
  AcceptResult,
  AccessChange,
  AccessListener,
  Channel,
  ChannelContext,
  ConversationRef,
  DeadLetterInput,
  DeliveryRecord,
  InboundMessage,
  NewDelivery,
  PendingApproval,
  RenderMeta,
  SessionKey,
  TurnEvent,
} from '@switchboard/core';
import { AsyncQueue } from '@switchboard/core';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { type FakeContextOwner, fakeChannelContext } from './fake-channel-context.js';
import {
  type LedgerWrite,
  type LiveTurn,
  type RenderOutcome,
  type ServiceRequest,
  type StartedTurn,
  Timeline,
  type TimelineEvent,
} from './fake-channel-records.js';

/**
 * What the gateway side of a channel test looks like: a real SQLite `:memory:` store (inbox,
 * sessions, turns, delivery ledger with its uniqueness rules), a real Fastify app for the
 * channel's routes and upgrades, and an observation log tests read instead of the
 * `ChannelContext` members. The context itself is built by {@link fakeChannelContext}: the one
 * place that knows the context's shape.
 */

/** Options for {@link FakeChannelEnv}. */
export interface FakeChannelEnvOptions {
  /** `limits.inboxMaxAttempts` the channel sees (default 3). */
  inboxMaxAttempts?: number;
  log?: Logger;
}

/** The fake gateway a channel runs against in unit and contract tests. */
export class FakeChannelEnv {
  readonly storage: SqliteStorage;
  readonly app: FastifyInstance;
  readonly log: Logger;
  readonly inboxMaxAttempts: number;
  private readonly steps = new Timeline();
  /** Items stored as new, in the order their accept resolved. */
  readonly accepted: InboundMessage[] = [];
  /** Items recognised as redeliveries of a stored one. */
  readonly duplicates: InboundMessage[] = [];
  readonly turnsStarted: StartedTurn[] = [];
  readonly deadLetters: DeadLetterInput[] = [];
  readonly ledgerWrites: LedgerWrite[] = [];
  readonly requests: ServiceRequest[] = [];
  /** Notices the gateway sent through {@link FakeChannelEnv.notify}, with how each call ended. */
  readonly notices: Array<{ to: ConversationRef; text: string; outcome: RenderOutcome }> = [];
  /** Approvals the channel may show again (`pendingApprovals`); tests add to it. */
  readonly pending: PendingApproval[] = [];
  url = '';
  private readonly listeners = new Set<AccessListener>();
  private readonly tokens = new Map<string, { principalId: string; tokenId: string; active: boolean }>();
  private readonly principals = new Map<string, { principalId: string; role: string }>();
  private acceptFailures: Array<() => unknown> = [];
  private ledgerFailures = 0;
  private held: Promise<void> | null = null;
  private isAccepting = true;
  private listening = false;

  constructor(opts: FakeChannelEnvOptions = {}) {
    this.storage = openSqliteStorage({ file: ':memory:' });
    this.log = opts.log ?? pino({ level: 'silent' });
    this.inboxMaxAttempts = opts.inboxMaxAttempts ?? 3;
    this.app = Fastify({ logger: false });
  }

  /** The context to pass to `channel.start`: bound to that channel account, as the gateway binds one per channel. */
  contextFor(channel: FakeContextOwner): ChannelContext {
    return fakeChannelContext(this, channel);
  }

  // ---- knobs -------------------------------------------------------------------------------

  /** The next `n` accepts reject (a transient storage failure unless `error` builds another). */
  failAccepts(n: number, error: () => unknown = () => new Error('fake gateway: the inbox is unavailable')): void {
    for (let i = 0; i < n; i++) this.acceptFailures.push(error);
  }

  /** Accepts wait until the returned function is called (the item is stored only then). */
  holdAccepts(): () => void {
    let release: () => void = () => undefined;
    this.held = new Promise<void>((r) => {
      release = r;
    });
    return () => {
      this.held = null;
      release();
    };
  }

  /** The next `n` ledger writes reject. */
  failLedger(n: number): void {
    this.ledgerFailures += n;
  }

  /** Ledger writes work again. */
  healLedger(): void {
    this.ledgerFailures = 0;
  }

  /** Registers a client token; the returned secret verifies to the principal. */
  addClientToken(principalId: string): { secret: string; tokenId: string } {
    const secret = `swb_test_${randomUUID()}`;
    const tokenId = randomUUID();
    this.tokens.set(secret, { principalId, tokenId, active: true });
    return { secret, tokenId };
  }

  /** Makes an identity (`telegram:42`) belong to a principal. */
  addPrincipal(identity: string, principalId: string, role = 'member'): void {
    this.principals.set(identity, { principalId, role });
  }

  /** Publishes an access change to the channel's subscription. */
  emitAccessChange(change: AccessChange): void {
    if (change.type === 'token_revoked') for (const t of this.tokens.values()) if (t.tokenId === change.tokenId) t.active = false;
    for (const l of this.listeners) l(change);
  }

  /** From now on `accepting()` is false (shutdown). */
  stopAccepting(): void {
    this.isAccepting = false;
  }

  /** Every step so far, in order (inbox events, ledger writes, and the acks harnesses mark). */
  get timeline(): readonly TimelineEvent[] {
    return this.steps.events;
  }

  /** Adds a step to the timeline; harnesses mark platform acks here the moment the platform fake sees them. */
  mark(kind: TimelineEvent['kind'], key: string, detail?: string): TimelineEvent {
    return this.steps.mark(kind, key, detail);
  }

  /** The first timeline event matching (past or future); rejects after `timeoutMs`. */
  waitFor(match: (e: TimelineEvent) => boolean, timeoutMs = 10_000): Promise<TimelineEvent> {
    return this.steps.waitFor(match, timeoutMs);
  }

  // ---- observation -------------------------------------------------------------------------

  /** The ledger rows of a turn, from the store. */
  ledger(turnId: string): Promise<DeliveryRecord[]> {
    return this.storage.deliveries.ofTurn(turnId);
  }

  /** Writes a ledger row directly (a previous process's delivery, for resume tests). */
  async seedDelivery(part: NewDelivery): Promise<DeliveryRecord> {
    return (await this.storage.deliveries.record(part)).record;
  }

  /** Turns started for one dedupe key. */
  turnsFor(dedupeKey: string): StartedTurn[] {
    return this.turnsStarted.filter((t) => t.dedupeKey === dedupeKey);
  }

  // ---- running the channel -----------------------------------------------------------------

  /** Starts listening on loopback once the channel registered its routes; returns the base URL. */
  async listen(): Promise<string> {
    if (!this.listening) {
      this.listening = true;
      this.url = await this.app.listen({ host: '127.0.0.1', port: 0 });
    }
    return this.url;
  }

  /** Feeds `events` to `channel.render` as the engine does; resolves with how the render ended. */
  async runTurn(
    channel: Pick<Channel, 'render'>,
    to: ConversationRef,
    turnId: string,
    events: Iterable<TurnEvent> | AsyncIterable<TurnEvent>,
    meta: RenderMeta = { clientId: null, resumed: false },
  ): Promise<RenderOutcome> {
    async function* stream(): AsyncIterable<TurnEvent> {
      yield* events;
    }
    return settle(() => channel.render(to, turnId, stream(), meta));
  }

  /** Starts a render whose events the test pushes one by one. */
  liveTurn(channel: Pick<Channel, 'render'>, to: ConversationRef, turnId: string, meta: RenderMeta = { clientId: null, resumed: false }): LiveTurn {
    const queue = new AsyncQueue<TurnEvent>();
    return { push: (e) => queue.push(e), end: () => queue.close(), result: settle(() => channel.render(to, turnId, queue, meta)) };
  }

  /** Sends a gateway notice (pairing code, refusal) through `channel.notify`, as the gateway does; records how it ended. */
  async notify(channel: Pick<Channel, 'notify'>, to: ConversationRef, text: string): Promise<RenderOutcome> {
    const outcome = await settle(() => channel.notify(to, text));
    this.notices.push({ to, text, outcome });
    return outcome;
  }

  async close(): Promise<void> {
    await this.app.close();
    this.storage.close();
  }

  // ---- the gateway's side, called by the context adapter ---------------------------------

  /** Durable accept: real inbox + turn rows; a dm session is keyed by the sender's principal. */
  async acceptItem(message: InboundMessage): Promise<AcceptResult> {
    this.mark('accept_called', message.dedupeKey);
    if (this.held) await this.held;
    const failure = this.acceptFailures.shift();
    if (failure) {
      const err = failure();
      this.mark('accept_failed', message.dedupeKey, err instanceof Error ? err.message : String(err));
      throw err;
    }
    const res = await this.storage.turns.accept(message, {
      key: this.sessionKey(message.conversation, this.principalOfMessage(message)),
      clientId: message.platformId,
    });
    if (res.duplicate) this.duplicates.push(message);
    else {
      this.accepted.push(message);
      if (res.turnId)
        this.turnsStarted.push({ turnId: res.turnId, dedupeKey: message.dedupeKey, conversation: message.conversation, clientId: message.platformId });
    }
    this.mark('accept_ok', message.dedupeKey, res.duplicate ? 'duplicate' : 'new');
    return { ...res, gate: 'admitted' };
  }

  async recordDeadLetter(item: DeadLetterInput): Promise<void> {
    await this.storage.deadLetters.record(item);
    this.deadLetters.push(item);
    this.mark('dead_letter', item.dedupeKey);
  }

  async recordPart(part: NewDelivery): Promise<{ record: DeliveryRecord; existed: boolean }> {
    if (this.ledgerFailures > 0) {
      this.ledgerFailures--;
      throw new Error('fake gateway: the delivery ledger is unavailable');
    }
    const r = await this.storage.deliveries.record(part);
    this.ledgerWrites.push({ part, existed: r.existed });
    this.mark('ledger_write', `${part.turnId}:${part.part}:${part.kind}`, r.existed ? 'existed' : 'new');
    return r;
  }

  finalsAfter(conversation: ConversationRef, cursor: number): Promise<DeliveryRecord[]> {
    return this.storage.deliveries.finalsSince(conversation.channel, conversation.account, conversation.id, cursor);
  }

  checkClientToken(secret: string): { principalId: string; tokenId: string } | null {
    const t = this.tokens.get(secret);
    return t?.active ? { principalId: t.principalId, tokenId: t.tokenId } : null;
  }

  tokenActive(tokenId: string): boolean {
    for (const t of this.tokens.values()) if (t.tokenId === tokenId) return t.active;
    return false;
  }

  subscribeAccess(listener: AccessListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  accepting(): boolean {
    return this.isAccepting;
  }

  principalOf(identity: string): { principalId: string; role: string } | null {
    return this.principals.get(identity) ?? null;
  }

  pendingFor(conversation: ConversationRef, turnId?: string): PendingApproval[] {
    this.request('pendingApprovals', conversation, turnId);
    return this.pending.filter((p) => turnId === undefined || p.turnId === turnId);
  }

  /** Records a service call (session, approval, command) the channel made. */
  request(name: string, ...args: unknown[]): void {
    this.requests.push({ name, args });
  }

  /** The live session of a conversation as the router would key it. */
  session(conversation: ConversationRef, principalId: string) {
    return this.storage.sessions.resolve(this.sessionKey(conversation, principalId));
  }

  sessionKey(conversation: ConversationRef, principalId: string): SessionKey {
    const base = { agent: 'default', channel: conversation.channel, account: conversation.account };
    if (conversation.kind === 'dm') return { ...base, scope: 'dm', principalId };
    return { ...base, scope: 'room', conversation: conversation.id, ...(conversation.thread ? { thread: conversation.thread } : {}) };
  }

  private principalOfMessage(m: InboundMessage): string {
    return m.principalId ?? this.principals.get(m.sender.identity)?.principalId ?? m.sender.identity;
  }
}

async function settle(render: () => Promise<void>): Promise<RenderOutcome> {
  try {
    await render();
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}
