import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AcceptResult, ConversationRef, InboundMessage } from '../channel.js';
import type { PairingOutcome, PairingRequest, PairingStatus, Storage } from '../storage.js';
import { notices } from './notices.js';
import { type ApprovalAsk, approvalRefusal, combineHeld } from './pairing-rules.js';
import { type BoundaryPolicy, type SenderBuckets, pairingCode } from './policy.js';
import type { PrincipalLinker } from './principal-linker.js';
import { DEFAULT_RATE_LIMIT, type PairingSettings } from './settings.js';

/** Where a notice goes: a conversation on a channel account. */
export interface NoticeAddress {
  channel: string;
  account: string;
  conversation: ConversationRef;
}

/** What the pairing desk works with (the boundary service hands over its own). */
export interface PairingDeskDeps {
  storage: Storage;
  log: Logger;
  pairing: PairingSettings;
  linker: PrincipalLinker;
  /** The boundary's rate limiter: an approved request's turn is charged to its sender. */
  limiter: SenderBuckets;
  /** Sends a notice; never throws (a notice that cannot be delivered is logged). */
  notify(to: NoticeAddress, text: string): Promise<void>;
  /** The effective policy of a channel account (null for an unknown one). */
  policy(channelId: string): Promise<BoundaryPolicy | null>;
  /** Queues an admitted message's turn. */
  admit(message: InboundMessage): Promise<AcceptResult>;
  /** Told when a code is issued and when one is decided (approved, rejected, expired): the console's live stream. Must not throw. */
  onActivity?: (event: PairingActivity) => void;
}

/** What {@link PairingDeskDeps.onActivity} is told. */
export interface PairingActivity {
  type: 'requested' | 'decided';
  code: string;
  channel: string;
  account: string;
  status: PairingStatus;
}

/** The gate outcome of an unknown sender's message, and whether it repeated one already counted. */
export interface PairingGate {
  gate: 'pairing' | 'held' | 'refused';
  duplicate: boolean;
}

/** What an approval did. */
export type ApproveOutcome =
  | { outcome: 'approved'; principalId: string; answered: number }
  | { outcome: 'not_found' | 'not_pending' | 'unknown_principal' }
  | { outcome: 'forbidden'; message: string };

/**
 * Pairing, the door for unknown senders (docs/security.md, "Pairing"): issues codes and holds
 * messages within the `pairing.*` limits, and carries out operators' approvals and rejections
 * and the codes' expiry — each audited, each sender told.
 */
export class PairingDesk {
  constructor(private readonly deps: PairingDeskDeps) {}

  /** Issues a code for an unknown sender's message, or holds the message under their pending one. */
  async request(message: InboundMessage, channelId: string, log: Logger): Promise<PairingGate> {
    const limits = this.deps.pairing;
    const outcome = await this.deps.storage.pairing.requestOrHold(
      {
        code: pairingCode((n) => randomBytes(n)),
        channel: message.channel,
        account: message.account,
        identity: message.sender.identity,
        displayName: message.sender.displayName ?? null,
        conversation: message.conversation,
        message,
        expiresAt: new Date(Date.now() + limits.codeTtl),
      },
      { maxPending: limits.maxPending, maxHeld: limits.maxHeld, maxHeldBytes: limits.maxHeldBytes, cooldown: limits.cooldown },
    );
    return this.answer(outcome, message, channelId, log);
  }

  /** Audits and notices for each outcome of `requestOrHold`. */
  private async answer(outcome: PairingOutcome, message: InboundMessage, channelId: string, log: Logger): Promise<PairingGate> {
    const limits = this.deps.pairing;
    const identity = message.sender.identity;
    const audit = this.deps.storage.audit;
    switch (outcome.kind) {
      case 'duplicate':
        return { gate: 'held', duplicate: true };
      case 'cooldown': {
        const reason = 'pairing.cooldown: this identity asked for access recently';
        log.info({ gate: 'refused', reason }, 'gate: refused');
        await audit.append({ actor: 'gateway', action: 'gate.refused', target: channelId, detail: { identity, reason } });
        await this.deps.notify(message, notices.cooldown(outcome.retryAt.getTime() - Date.now()));
        return { gate: 'refused', duplicate: false };
      }
      case 'overflow': {
        const code = outcome.request.code;
        log.info({ gate: 'refused', reason: `pairing.${outcome.limit} reached`, code }, 'gate: held message not kept');
        if (outcome.first) {
          await audit.append({
            actor: 'gateway',
            action: 'gate.held_overflow',
            target: channelId,
            detail: { identity, code, limit: `pairing.${outcome.limit}` },
          });
          await this.deps.notify(message, notices.heldOverflow(code, outcome.limit, limits));
        }
        return { gate: 'refused', duplicate: false };
      }
      case 'created': {
        if (outcome.evicted) await this.evicted(outcome.evicted, channelId);
        log.info({ gate: 'pairing', code: outcome.request.code }, 'gate: pairing code issued');
        await audit.append({ actor: 'gateway', action: 'gate.pairing', target: channelId, detail: { identity, code: outcome.request.code } });
        this.activity('requested', outcome.request, 'pending');
        const validFor = outcome.request.expiresAt.getTime() - Date.now();
        await this.deps.notify(message, notices.pairingCode(outcome.request, validFor, outcome.kept, limits.maxHeldBytes));
        return { gate: 'pairing', duplicate: false };
      }
      case 'held':
        log.info({ gate: 'held', code: outcome.request.code }, 'gate: message held for pairing');
        await this.deps.notify(message, notices.held(outcome.request, limits.maxHeld));
        return { gate: 'held', duplicate: false };
    }
  }

  /** The answer to a redelivered held message: nothing changes, nobody is told again. */
  async redelivered(request: PairingRequest): Promise<AcceptResult> {
    if (request.status === 'approved') {
      const answered = await this.deps.storage.turns.seen(request.channel, request.account, `pairing:${request.code}`);
      if (answered) return { ...answered, duplicate: true, gate: 'admitted' };
    }
    return { duplicate: true, inboxId: '', turnId: null, sessionId: null, gate: 'held' };
  }

  /** A pending request expired to make room (pairing.maxPending): audited, its sender told. */
  private async evicted(request: PairingRequest, channelId: string): Promise<void> {
    this.deps.log.info({ channel: channelId, identity: request.identity, code: request.code }, 'pairing: oldest pending request expired to make room');
    await this.deps.storage.audit.append({
      actor: 'system',
      action: 'pairing.expired',
      target: request.code,
      detail: {
        identity: request.identity,
        discarded: request.heldCount,
        reason: 'pairing.maxPending reached: the oldest pending request expired to make room',
      },
    });
    this.activity('decided', request, 'expired');
    await this.deps.notify(request, notices.evicted(request, this.deps.pairing.cooldown));
  }

  private activity(type: PairingActivity['type'], r: Pick<PairingRequest, 'code' | 'channel' | 'account'>, status: PairingStatus): void {
    try {
      this.deps.onActivity?.({ type, code: r.code, channel: r.channel, account: r.account, status });
    } catch (err) {
      this.deps.log.error({ err }, 'the pairing activity observer failed');
    }
  }

  /** Pairing requests (operators' view). */
  list(filter: { status?: PairingStatus; channel?: string; account?: string }): Promise<PairingRequest[]> {
    return this.deps.storage.pairing.list(filter);
  }

  /**
   * Approves a pairing code: creates or links a principal (who may do which: `approvalRefusal`),
   * then answers the held messages as one turn, in order, charged to the sender's rate limit.
   */
  async approve(code: string, ask: ApprovalAsk, by: string): Promise<ApproveOutcome> {
    const { storage } = this.deps;
    const request = await storage.pairing.get(code);
    if (!request) return { outcome: 'not_found' };
    if (request.status !== 'pending' || request.expiresAt.getTime() <= Date.now()) return { outcome: 'not_pending' };
    const target = ask.principalId !== undefined ? await storage.principals.get(ask.principalId) : null;
    const channelId = `${request.channel}:${request.account}`;
    const policy = await this.deps.policy(channelId);
    const pairingRole = policy?.pairingRole ?? 'member';
    const refusal = approvalRefusal(ask, pairingRole, target);
    if (refusal) return { outcome: 'forbidden', message: refusal };
    if (ask.principalId !== undefined && !target) return { outcome: 'unknown_principal' };
    const role = target ? target.role : (ask.role ?? pairingRole);
    const held = await storage.pairing.held(code);
    const principalId = target?.id ?? (await this.deps.linker.createPrincipal(request.displayName ?? request.identity, role));
    if (!(await storage.pairing.decide(code, 'approved', by, principalId))) return { outcome: 'not_pending' };
    const sep = request.identity.indexOf(':');
    await storage.principals.linkIdentity(principalId, request.identity.slice(0, sep), request.identity.slice(sep + 1));
    // Linking to a principal that exists: someone's identity, sessions and grants now answer to this sender too.
    const action = target ? 'pairing.linked' : 'pairing.approved';
    const detail = target ? { identity: request.identity, principalId, role, privileged: true } : { identity: request.identity, principalId, role };
    await storage.audit.append({ actor: by, action, target: code, detail });
    this.activity('decided', request, 'approved');
    const turn = combineHeld(code, held);
    await this.deps.notify(request, notices.approved(turn !== null));
    if (turn) {
      await this.deps.limiter.take(`${channelId}|${request.identity}`, policy?.rateLimit ?? DEFAULT_RATE_LIMIT, Date.now(), { force: true });
      await this.deps.admit({ ...turn, principalId });
    }
    await storage.pairing.forgetHeld(code);
    return { outcome: 'approved', principalId, answered: held.length };
  }

  /** Rejects a pairing code: the held messages are discarded and the sender told. */
  async reject(code: string, by: string): Promise<'rejected' | 'not_found' | 'not_pending'> {
    const request = await this.deps.storage.pairing.get(code);
    if (!request) return 'not_found';
    if (!(await this.deps.storage.pairing.decide(code, 'rejected', by))) return 'not_pending';
    await this.deps.storage.audit.append({
      actor: by,
      action: 'pairing.rejected',
      target: code,
      detail: { identity: request.identity, discarded: request.heldCount },
    });
    this.activity('decided', request, 'rejected');
    await this.deps.notify(request, notices.rejected());
    return 'rejected';
  }

  /** Expires overdue codes, telling each sender their message was discarded; returns how many expired. */
  async expire(): Promise<number> {
    const due = await this.deps.storage.pairing.expired(new Date());
    let expired = 0;
    for (const request of due) {
      if (!(await this.deps.storage.pairing.decide(request.code, 'expired', 'system'))) continue;
      expired++;
      await this.deps.storage.audit.append({
        actor: 'system',
        action: 'pairing.expired',
        target: request.code,
        detail: { identity: request.identity, discarded: request.heldCount, reason: 'pairing.codeTtl passed' },
      });
      this.activity('decided', request, 'expired');
      await this.deps.notify(request, notices.expired(request));
    }
    return expired;
  }
}
