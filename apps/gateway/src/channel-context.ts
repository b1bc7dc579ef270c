import type { IncomingMessage } from 'node:http';
import {
  autoModeStatus,
  MemoryDesk,
  ChatCommands,
  DeliveryLedger,
  type AccessEvents,
  type AcceptResult,
  type ApprovalBroker,
  type BudgetService,
  type Channel,
  type ChannelApprovals,
  type ChannelClientAuth,
  type ChannelContext,
  type ChannelFanout,
  type ChannelInbox,
  type ChannelPeople,
  type ConversationRef,
  type FileShelf,
  type InboundMessage,
  type Session,
  type SessionKey,
  type SharedMarks,
  type Storage,
  type TurnEngine,
} from '@switchboard/core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { FailedAuthGate } from './auth-limiter.js';
import type { PolicyService } from '@switchboard/core';
import type { TokenExpiry } from './token-expiry.js';
import { verifySecret } from './tokens.js';
import { WEB_CHAT_CHANNEL, webChatSession } from './console/web-chat-auth.js';
import type { ConsoleAuth } from './console/request-auth.js';

export interface ChannelContextDeps {
  /** The agent ids messages may address, the default first. */
  agents: readonly string[];
  storage: Storage;
  engine: TurnEngine;
  broker: ApprovalBroker;
  policy: PolicyService;
  log: Logger;
  accept(message: InboundMessage): Promise<AcceptResult>;
  sessionKey(conv: ConversationRef, principalId: string): SessionKey;
  queueMode(session: Session, channelId: string): 'followup' | 'steer';
  modelName: string;
  /** Failed-auth rate limiting, shared with the control API. */
  limiter: FailedAuthGate;
  /** The client key of a request (trusted proxies honoured, IPv6 by /64). */
  clientAddress(req: IncomingMessage): string;
  /** Access changes the control API announces. */
  access: AccessEvents;
  /** Closes sockets on a client token when its `expiresAt` passes. */
  tokenExpiry: TokenExpiry;
  /** False once the gateway is shutting down. */
  accepting(): boolean;
  /** `limits.inboxMaxAttempts`. */
  inboxMaxAttempts: number;
  /** Budgets and spend (`/usage`). */
  budgets: BudgetService;
  /** Files offered at `GET /files/{id}` (WebSocket `file` frames). */
  files?: FileShelf;
  /** The console's sessions (`console.enabled`): the web chat signs in on the `default` WebSocket account with their cookie. */
  console?: ConsoleAuth;
  /** Replicas on PostgreSQL: channel frames for other replicas' viewers, and shared marks (see wiring/replica-fanout.ts). */
  replicas?: { fanout(channelId: string): ChannelFanout; marks: SharedMarks };
  /** `leased` when replicas share the database: exclusive receivers start only under their lease (wiring/receivers.ts). */
  receiving?: 'direct' | 'leased';
}

/** Turn states in which a pending approval can still be answered usefully. */
const OPEN_TURN_STATES: ReadonlySet<string> = new Set(['running', 'awaiting_approval', 'suspended']);

/**
 * What the gateway offers one channel adapter (packages/core/src/channel.ts, `ChannelContext`):
 * the capability groups, bound to this channel account. `clientAuth` only for a channel that
 * authenticates its own clients (`Channel.authenticatesClients`).
 */
export function channelContext(deps: ChannelContextDeps, ch: Channel, app: FastifyInstance): ChannelContext {
  const people = channelPeople(deps, ch);
  return {
    inbox: channelInbox(deps, ch),
    ledger: new DeliveryLedger(deps.storage.deliveries, { channel: ch.type, account: ch.account }, deps.engine.finishes),
    people,
    approvals: channelApprovals(deps),
    commands: new ChatCommands(people),
    ...(ch.authenticatesClients ? { clientAuth: clientAuth(deps, ch.id === WEB_CHAT_CHANNEL ? deps.console : undefined) } : {}),
    http: { register: async (plugin) => void (await app.register(plugin)), ...(deps.files ? { files: deps.files } : {}) },
    log: deps.log.child({ channel: ch.id }),
    ...(deps.replicas ? { fanout: deps.replicas.fanout(ch.id), marks: deps.replicas.marks } : {}),
  };
}

function channelInbox(deps: ChannelContextDeps, ch: Channel): ChannelInbox {
  const { cursors } = deps.storage;
  return {
    accept: deps.accept,
    maxAttempts: deps.inboxMaxAttempts,
    deadLetter: async (item) => {
      const r = await deps.storage.deadLetters.record(item);
      deps.log.error(
        {
          event: 'dead_letter',
          channel: item.channel,
          account: item.account,
          conversation: item.conversation,
          dedupeKey: item.dedupeKey,
          attempts: item.attempts,
          error: item.error,
          deadLetterId: r.id,
        },
        `${item.channel}:${item.account}: gave up on an inbound item after ${item.attempts} attempts; recorded as a dead letter`,
      );
    },
    accepting: deps.accepting,
    agents: deps.agents,
    cursors: {
      get: (name) => cursors.get(`${ch.id}:${name}`),
      set: (name, value) => cursors.set(`${ch.id}:${name}`, value),
    },
    ...(deps.receiving === 'leased' ? { receiving: 'leased' as const } : {}),
  };
}

function clientAuth(deps: ChannelContextDeps, web: ConsoleAuth | undefined): ChannelClientAuth {
  const { storage } = deps;
  return {
    ...(web ? { consoleSession: (req: IncomingMessage) => webChatSession(web, req) } : {}),
    tokenActive: async (tokenId) => {
      const t = await storage.tokens.get(tokenId);
      return !!t && t.kind === 'client' && !t.revokedAt && t.principalId !== null && !(t.expiresAt && t.expiresAt.getTime() <= Date.now());
    },
    verify: async (secret, address) => {
      // The attempt counts as a failure from before the lookup until it is known to be right.
      const attempt = address === undefined ? null : await deps.limiter.begin(address);
      if (attempt?.locked) return { lockedOut: true, retryAfterSec: attempt.retryAfterSec };
      let ok = false;
      try {
        const t = await verifySecret(storage, secret, 'client');
        ok = !!t && t.principalId !== null;
        if (t?.expiresAt && ok) deps.tokenExpiry.arm(t.id, t.expiresAt);
        return t?.principalId ? { principalId: t.principalId, tokenId: t.id } : null;
      } finally {
        await attempt?.settle(ok);
      }
    },
    addressOf: deps.clientAddress,
    onAccessChange: (listener) => deps.access.on(listener),
  };
}

function channelPeople(deps: ChannelContextDeps, ch: Channel): ChannelPeople {
  const { storage, engine } = deps;
  const session = (conv: ConversationRef, principalId: string) => storage.sessions.resolve(deps.sessionKey(conv, principalId));
  const roleOf = async (principalId: string) => (await storage.principals.get(principalId))?.role ?? 'guest';
  const memoryDesk = new MemoryDesk(storage);
  // The conversation's agent (from its session key) and whether it is a room: memory scopes follow them.
  const memoryCaller = (conv: ConversationRef, principalId: string) => {
    const key = deps.sessionKey(conv, principalId);
    return memoryDesk.caller(principalId, key.agent, key.scope === 'room');
  };
  return {
    memories: {
      list: async (conv, principalId) => memoryDesk.list(await memoryCaller(conv, principalId)),
      forget: async (conv, principalId, id) => memoryDesk.forget(await memoryCaller(conv, principalId), id),
    },
    updateSession: async (conv, principalId, patch) => {
      const s = await session(conv, principalId);
      const updated = await storage.sessions.updateSettings(s.id, patch);
      return { sessionId: updated.id, queueMode: deps.queueMode(updated, ch.id) };
    },
    resetSession: (conv, principalId) => storage.sessions.reset(deps.sessionKey(conv, principalId)),
    principalFor: async (identity) => {
      const sep = identity.indexOf(':');
      if (sep <= 0) return null;
      const p = await storage.principals.byIdentity(identity.slice(0, sep), identity.slice(sep + 1));
      return p ? { principalId: p.id, role: p.role } : null;
    },
    sessionStatus: async (conv, principalId) => {
      const s = await session(conv, principalId);
      const role = await roleOf(principalId);
      const entries = await storage.sessions.load(s.id);
      const pending = await storage.approvals.list({ sessionId: s.id, status: 'pending' });
      const mode = await deps.policy.modeFor({ session: s, role, principalId, channelId: ch.id, conversation: conv });
      const auto = autoModeStatus(s, mode);
      return {
        sessionId: s.id,
        model: deps.modelName,
        mode,
        queueMode: deps.queueMode(s, ch.id),
        entries: entries.length,
        pendingApprovals: pending.length,
        running: engine.isRunning(s.id),
        ...(auto ? { auto } : {}),
      };
    },
    contextReport: async (conv, principalId) => {
      const s = await session(conv, principalId);
      const auto = await deps.policy.autoStatus({ session: s, role: await roleOf(principalId), principalId, channelId: ch.id, conversation: conv });
      return { ...(await engine.contextReport(s)), ...(auto ? { auto } : {}) };
    },
    setMode: async (conv, principalId, mode) => {
      const s = await session(conv, principalId);
      const role = await roleOf(principalId);
      const modeCtx = { session: s, role, principalId, channelId: ch.id, conversation: conv };
      const check = await deps.policy.checkModeChange(modeCtx, mode);
      if (!check.ok) return check;
      await storage.sessions.updateSettings(s.id, { mode: check.mode });
      await storage.audit.append({ actor: `principal:${principalId}`, action: 'session.mode', target: s.id, detail: { mode: check.mode } });
      await deps.policy.sessionModeSet(modeCtx, check.mode, `principal:${principalId}`);
      return { ok: true, mode: check.mode };
    },
    stopRunning: async (conv, principalId) => {
      const s = await session(conv, principalId);
      return engine.abortSession(s.id);
    },
    usage: async (_conv, principalId) => deps.budgets.personal(principalId, await roleOf(principalId)),
    profiles: storage.profiles,
    abortTurn: async (turnId, conv) => {
      const turn = await storage.turns.get(turnId);
      if (!turn) return false;
      const item = await storage.turns.inbox(turn.inboxId);
      const c = item?.message.conversation;
      if (!c || c.channel !== conv.channel || c.account !== conv.account || c.id !== conv.id) return false;
      return engine.abort(turnId);
    },
    compactSession: async (conv, principalId, instructions) => {
      const s = await session(conv, principalId);
      // A shared room session is everyone's history: only its admins may summarize it away.
      if (s.scope === 'room' && !ROOM_COMPACTORS.has(await roleOf(principalId))) return { outcome: 'admins_only' };
      const r = await engine.compact(s, { principalId, ...(instructions ? { instructions } : {}) });
      if (r.outcome === 'compacted') {
        const detail = { trigger: 'manual', throughSeq: r.throughSeq, tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter };
        await storage.audit.append({ actor: `principal:${principalId}`, action: 'session.compact', target: s.id, detail });
      }
      return r;
    },
  };
}

/** Who may `/compact` a shared room session. */
const ROOM_COMPACTORS: ReadonlySet<string> = new Set(['owner', 'admin']);

function channelApprovals(deps: ChannelContextDeps): ChannelApprovals {
  const { storage } = deps;
  return {
    pending: async (conv, turnId) => {
      const all = [];
      for (let offset = 0; ; offset += 500) {
        const page = await storage.approvals.list({ status: 'pending', ...(turnId ? { turnId } : {}), limit: 500, offset });
        all.push(...page);
        if (page.length < 500) break;
      }
      const out = [];
      for (const a of all.reverse()) {
        const c = a.conversation;
        if (c.channel !== conv.channel || c.account !== conv.account || c.id !== conv.id || (c.thread ?? null) !== (conv.thread ?? null)) continue;
        const turn = await storage.turns.get(a.turnId);
        // Only a turn that can still use the answer: running, waiting for it, or suspended to resume.
        if (!turn || !OPEN_TURN_STATES.has(turn.state)) continue;
        out.push({
          approvalId: a.id,
          turnId: a.turnId,
          clientId: turn.clientId,
          tool: a.tool,
          summary: a.summary,
          expiresAt: a.expiresAt.toISOString(),
          source: a.source,
          ...(a.choices ? { choices: a.choices } : {}),
        });
      }
      return out;
    },
    decide: async (approvalId, decision, always, by, choice) => {
      const role = (await storage.principals.get(by.principalId))?.role ?? 'guest';
      const r = await deps.broker.decide(approvalId, decision, always, { kind: 'principal', principalId: by.principalId, role }, undefined, choice);
      if (r.outcome === 'not_found') return { outcome: 'not_found' };
      if (r.outcome === 'forbidden' || r.outcome === 'invalid') return { outcome: r.outcome, reason: r.reason };
      return {
        outcome: r.outcome,
        status: r.approval.status,
        tool: r.approval.tool,
        ...(r.approval.decidedBy ? { decidedBy: r.approval.decidedBy } : {}),
        ...(r.approval.choice !== null ? { choice: r.approval.choice } : {}),
      };
    },
  };
}
