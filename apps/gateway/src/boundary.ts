import { randomBytes } from 'node:crypto';
import {
  BOUNDARY_FIELDS,
  RateLimiter,
  decideGate,
  pairingCode,
  type AcceptResult,
  type BoundaryField,
  type BoundaryPolicy,
  type Channel,
  type InboundMessage,
  type PairingRequest,
  type Role,
  type Scope,
  type Storage,
} from '@switchboard/core';
import { ownValue } from '@switchboard/core';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { approvalRefusal, combineHeld, span } from './pairing-rules.js';
import { RateLimitAudit } from './rate-limit-audit.js';

type Counters = Record<'admitted' | 'pairing' | 'held' | 'refused' | 'rate_limited' | 'ignored', number>;

export interface FieldView {
  value: unknown;
  source: 'config' | 'operator';
  updatedBy?: string;
  updatedAt?: string;
}

/** The base (config) policy of a channel account. */
function configPolicy(cfg: Readonly<Config>, channelId: string): BoundaryPolicy | null {
  const [type, account] = channelId.split(':') as [string, string];
  const section = ownValue(cfg.channels as Record<string, { accounts: Record<string, Partial<BoundaryPolicy>> } | undefined>, type);
  const a = ownValue(section?.accounts, account);
  if (!a) return null;
  return {
    dmPolicy: a.dmPolicy ?? 'pairing',
    allowFrom: a.allowFrom ?? [],
    groupPolicy: a.groupPolicy ?? 'allowlist',
    groups: a.groups ?? {},
    requireMention: a.requireMention ?? true,
    rateLimit: a.rateLimit ?? { burst: 10, perMinute: 20 },
    pairingRole: a.pairingRole ?? 'member',
    permissionMode: a.permissionMode ?? null,
  };
}

export interface BoundaryDeps {
  /** The config in force, read on every use (the gateway passes its `LiveConfig`'s current one). */
  cfg: Readonly<Config>;
  storage: Storage;
  log: Logger;
  channel(id: string): Channel | undefined;
  /** Queues an admitted message's turn (the engine). */
  admit(message: InboundMessage): Promise<AcceptResult>;
}

/**
 * The boundary, layer 1 of access control: one gate for every channel, run before anything
 * reaches a runtime. Policies come from the config, with operators' overrides winning field by
 * field; decisions are logged, counted and (refusals) audited.
 */
export class BoundaryService {
  private readonly limiter = new RateLimiter();
  private readonly counters = new Map<string, Counters>();
  private readonly cache = new Map<string, BoundaryPolicy>();
  private readonly linking = new Map<string, Promise<string>>();
  private readonly limitedAudit: RateLimitAudit;
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly d: BoundaryDeps) {
    this.limitedAudit = new RateLimitAudit(d.storage, d.cfg.audit.rateLimitWindow, d.log);
  }

  /** Starts the expiry sweep of pairing requests and the rate-limit audit's window. */
  start(): void {
    this.sweep = setInterval(
      () => void this.expire().catch((err: unknown) => this.d.log.error({ err }, 'pairing expiry sweep failed')),
      this.d.cfg.pairing.sweepInterval,
    );
    this.sweep.unref();
    this.limitedAudit.start();
  }

  /** Stops the timers and writes the rate-limit counts still in memory. */
  async stop(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    await this.limitedAudit.stop();
  }

  counts(channelId: string): Counters {
    let c = this.counters.get(channelId);
    if (!c) this.counters.set(channelId, (c = { admitted: 0, pairing: 0, held: 0, refused: 0, rate_limited: 0, ignored: 0 }));
    return c;
  }

  /** The effective policy of a channel account (null for an unknown one). */
  async policy(channelId: string): Promise<BoundaryPolicy | null> {
    const cached = this.cache.get(channelId);
    if (cached) return cached;
    const base = configPolicy(this.d.cfg, channelId);
    if (!base) return null;
    const effective = { ...base } as Record<string, unknown>;
    for (const o of await this.d.storage.policies.list(channelId)) effective[o.field] = o.value;
    this.cache.set(channelId, effective as unknown as BoundaryPolicy);
    return effective as unknown as BoundaryPolicy;
  }

  /** Each field's effective value and where it came from. */
  async policyView(channelId: string): Promise<Record<BoundaryField, FieldView> | null> {
    const base = configPolicy(this.d.cfg, channelId);
    if (!base) return null;
    const overrides = new Map((await this.d.storage.policies.list(channelId)).map((o) => [o.field, o]));
    const out = {} as Record<BoundaryField, FieldView>;
    for (const f of BOUNDARY_FIELDS) {
      const o = overrides.get(f);
      out[f] = o ? { value: o.value, source: 'operator', updatedBy: o.updatedBy, updatedAt: o.updatedAt.toISOString() } : { value: base[f], source: 'config' };
    }
    return out;
  }

  /** Applies operator overrides (already validated); live from the next message. */
  async setPolicy(channelId: string, patch: Partial<BoundaryPolicy>, by: string): Promise<void> {
    for (const [field, value] of Object.entries(patch)) {
      if (value !== undefined) await this.d.storage.policies.set(channelId, field, value, by);
    }
    this.cache.delete(channelId);
    await this.d.storage.audit.append({ actor: by, action: 'policy.update', target: channelId, detail: patch });
  }

  /** After a config reload (SIGHUP): policies are recomputed from the new config from the next message. */
  configChanged(): void {
    this.cache.clear();
  }

  /** Removes an override: the field falls back to the config. */
  async clearPolicy(channelId: string, field: BoundaryField, by: string): Promise<boolean> {
    const removed = await this.d.storage.policies.remove(channelId, field);
    this.cache.delete(channelId);
    if (removed) await this.d.storage.audit.append({ actor: by, action: 'policy.reset', target: channelId, detail: { field } });
    return removed;
  }

  private async notify(m: { channel: string; account: string; conversation: InboundMessage['conversation'] }, text: string): Promise<void> {
    const ch = this.d.channel(`${m.channel}:${m.account}`);
    await ch?.notify(m.conversation, text).catch((err: unknown) => this.d.log.warn({ err }, 'notice not delivered'));
  }

  /** Runs the gate for one inbound message, with its side effects (pairing, notices, linking). */
  async accept(message: InboundMessage): Promise<AcceptResult> {
    const channelId = `${message.channel}:${message.account}`;
    // A redelivery of an admitted item is answered from the inbox: no second gate decision, no
    // rate-limit token, no second notice.
    const seen = await this.d.storage.turns.seen(message.channel, message.account, message.dedupeKey, message.text);
    if (seen) return { ...seen, gate: 'admitted' };
    // Likewise a redelivery of a message held for pairing: held once, noticed once.
    const heldBy = message.principalId
      ? null
      : await this.d.storage.pairing.heldSeen(message.channel, message.account, message.sender.identity, message.dedupeKey);
    if (heldBy) return this.heldAgain(heldBy);
    const policy =
      (await this.policy(channelId)) ??
      ({
        ...configPolicy(this.d.cfg, channelId),
        dmPolicy: 'allowlist',
        allowFrom: [],
        groupPolicy: 'disabled',
        groups: {},
        requireMention: true,
        rateLimit: { burst: 10, perMinute: 20 },
        pairingRole: 'member',
        permissionMode: null,
      } as BoundaryPolicy);
    const sep = message.sender.identity.indexOf(':');
    const channelType = message.sender.identity.slice(0, sep);
    const externalId = message.sender.identity.slice(sep + 1);
    const known = message.principalId ? null : await this.d.storage.principals.byIdentity(channelType, externalId);
    const principalId = message.principalId ?? known?.id ?? null;
    const decision = decideGate(policy, {
      kind: message.kind,
      isBot: message.sender.isBot,
      mentioned: message.mentioned,
      externalId: externalId.includes(':') ? externalId.slice(externalId.lastIndexOf(':') + 1) : externalId,
      conversationId: message.conversation.id,
      principalId,
      authenticated: message.principalId !== undefined,
    });
    const log = this.d.log.child({ channel: channelId, identity: message.sender.identity, dedupeKey: message.dedupeKey });
    const none = (gate: NonNullable<AcceptResult['gate']>): AcceptResult => {
      this.counts(channelId)[gate]++;
      return { duplicate: false, inboxId: '', turnId: null, sessionId: null, gate };
    };
    if (decision.decision === 'ignored') {
      log.info({ gate: 'ignored', reason: decision.reason }, 'gate: ignored');
      return none('ignored');
    }
    // Every outcome that costs the gateway something (a turn, a notice, a held row, an audit
    // row) takes a token from the sender's bucket first.
    const limited = this.limiter.take(`${channelId}|${message.sender.identity}`, policy.rateLimit);
    if (!limited.ok) {
      log.info({ gate: 'rate_limited', outcome: decision.decision }, 'gate: rate limited');
      await this.limitedAudit.record(channelId, message.sender.identity);
      if (limited.warn) await this.notify(message, 'You are sending messages faster than this assistant accepts. Please slow down and try again in a minute.');
      return none('rate_limited');
    }
    switch (decision.decision) {
      case 'refused':
        log.info({ gate: 'refused', reason: decision.reason }, 'gate: refused');
        await this.d.storage.audit.append({
          actor: 'gateway',
          action: 'gate.refused',
          target: channelId,
          detail: { identity: message.sender.identity, reason: decision.reason },
        });
        if (decision.notify) await this.notify(message, decision.notify);
        return none('refused');
      case 'pairing':
        return this.pair(message, channelId, log);
      case 'admitted': {
        let pid = decision.principalId;
        if (decision.autoLink && !pid) pid = await this.autoLink(channelType, externalId, message.sender.displayName, policy.pairingRole);
        this.counts(channelId).admitted++;
        log.debug({ gate: 'admitted' }, 'gate: admitted');
        const res = await this.d.admit(pid ? { ...message, principalId: pid } : message);
        return { ...res, gate: 'admitted' };
      }
      default:
        return none('ignored');
    }
  }

  /** The answer to a redelivered held message: nothing changes, nobody is told again. */
  private async heldAgain(req: PairingRequest): Promise<AcceptResult> {
    if (req.status === 'approved') {
      const answered = await this.d.storage.turns.seen(req.channel, req.account, `pairing:${req.code}`);
      if (answered) return { ...answered, duplicate: true, gate: 'admitted' };
    }
    return { duplicate: true, inboxId: '', turnId: null, sessionId: null, gate: 'held' };
  }

  /** Creates (once) the principal of an allowlisted identity and links it. */
  private autoLink(channelType: string, externalId: string, displayName: string | undefined, role: Role): Promise<string> {
    const key = `${channelType}:${externalId}`;
    const running = this.linking.get(key);
    if (running) return running;
    const p = (async () => {
      const existing = await this.d.storage.principals.byIdentity(channelType, externalId);
      if (existing) return existing.id;
      const principal = await this.createPrincipal(displayName ?? key, role);
      await this.d.storage.principals.linkIdentity(principal, channelType, externalId);
      await this.d.storage.audit.append({
        actor: 'gateway',
        action: 'principal.created',
        target: principal,
        detail: { identity: key, role, via: 'allowFrom' },
      });
      return principal;
    })().finally(() => this.linking.delete(key));
    this.linking.set(key, p);
    return p;
  }

  private async createPrincipal(name: string, role: Role): Promise<string> {
    const base = name.replace(/[^A-Za-z0-9._@-]/g, '-').slice(0, 48) || 'person';
    for (let i = 0; ; i++) {
      const candidate = i === 0 ? base : `${base}-${i + 1}`;
      if (!(await this.d.storage.principals.byName(candidate))) return (await this.d.storage.principals.create({ name: candidate, role })).id;
    }
  }

  private async pair(message: InboundMessage, channelId: string, log: Logger): Promise<AcceptResult> {
    const p = this.d.cfg.pairing;
    const r = await this.d.storage.pairing.requestOrHold(
      {
        code: pairingCode((n) => randomBytes(n)),
        channel: message.channel,
        account: message.account,
        identity: message.sender.identity,
        displayName: message.sender.displayName ?? null,
        conversation: message.conversation,
        message,
        expiresAt: new Date(Date.now() + p.codeTtl),
      },
      { maxPending: p.maxPending, maxHeld: p.maxHeld, maxHeldBytes: p.maxHeldBytes, cooldown: p.cooldown },
    );
    const result = (gate: 'pairing' | 'held' | 'refused', duplicate = false): AcceptResult => {
      if (!duplicate) this.counts(channelId)[gate]++;
      return { duplicate, inboxId: '', turnId: null, sessionId: null, gate };
    };
    const identity = message.sender.identity;
    switch (r.kind) {
      case 'duplicate':
        return result('held', true);
      case 'cooldown': {
        const reason = 'pairing.cooldown: this identity asked for access recently';
        log.info({ gate: 'refused', reason }, 'gate: refused');
        await this.d.storage.audit.append({ actor: 'gateway', action: 'gate.refused', target: channelId, detail: { identity, reason } });
        await this.notify(
          message,
          `You asked for access recently, so this message was not kept. You can try again in ${span(r.retryAt.getTime() - Date.now())} (pairing.cooldown).`,
        );
        return result('refused');
      }
      case 'overflow': {
        const limit =
          r.limit === 'maxHeld' ? `at most ${p.maxHeld} messages (pairing.maxHeld)` : `at most ${p.maxHeldBytes} bytes of messages (pairing.maxHeldBytes)`;
        log.info({ gate: 'refused', reason: `pairing.${r.limit} reached`, code: r.request.code }, 'gate: held message not kept');
        if (r.first) {
          await this.d.storage.audit.append({
            actor: 'gateway',
            action: 'gate.held_overflow',
            target: channelId,
            detail: { identity, code: r.request.code, limit: `pairing.${r.limit}` },
          });
          await this.notify(
            message,
            `This message was not kept: while pairing code ${r.request.code} waits for an operator, ${limit} are kept. Later messages are not kept either; send them again once you are approved.`,
          );
        }
        return result('refused');
      }
      case 'created': {
        if (r.evicted) await this.evicted(r.evicted, channelId);
        log.info({ gate: 'pairing', code: r.request.code }, 'gate: pairing code issued');
        await this.d.storage.audit.append({ actor: 'gateway', action: 'gate.pairing', target: channelId, detail: { identity, code: r.request.code } });
        const kept = r.kept
          ? 'Your message is kept and will be answered once you are approved.'
          : `Your message was too large to keep (pairing.maxHeldBytes is ${p.maxHeldBytes} bytes); send it again once you are approved.`;
        await this.notify(
          message,
          `Hi! This assistant needs an operator's approval before it answers you. Your pairing code is ${r.request.code} (valid for ${span(r.request.expiresAt.getTime() - Date.now())}). ${kept}`,
        );
        return result('pairing');
      }
      case 'held':
        log.info({ gate: 'held', code: r.request.code }, 'gate: message held for pairing');
        await this.notify(
          message,
          `Still waiting for an operator to approve pairing code ${r.request.code}. Your message is kept (${r.request.heldCount} of at most ${p.maxHeld}).`,
        );
        return result('held');
    }
  }

  /** A pending request expired to make room (pairing.maxPending): audited, its sender told. */
  private async evicted(req: PairingRequest, channelId: string): Promise<void> {
    this.d.log.info({ channel: channelId, identity: req.identity, code: req.code }, 'pairing: oldest pending request expired to make room');
    await this.d.storage.audit.append({
      actor: 'system',
      action: 'pairing.expired',
      target: req.code,
      detail: { identity: req.identity, discarded: req.heldCount, reason: 'pairing.maxPending reached: the oldest pending request expired to make room' },
    });
    await this.notify(
      req,
      `Your pairing code ${req.code} was withdrawn before an operator approved it, because newer access requests needed the slot, so your message was discarded. You can send a new message after ${span(this.d.cfg.pairing.cooldown)} to get a new code.`,
    );
  }

  /** Pairing requests (operators' view). */
  list(filter: { status?: PairingRequest['status']; channel?: string; account?: string }): Promise<PairingRequest[]> {
    return this.d.storage.pairing.list(filter);
  }

  /**
   * Approves a pairing code: creates or links a principal (who may do which: `approvalRefusal`),
   * then answers the held messages as one turn, in order, charged to the sender's rate limit.
   */
  async approve(
    code: string,
    opts: { role?: Role | undefined; principalId?: string | undefined; scopes: readonly Scope[] },
    by: string,
  ): Promise<
    | { outcome: 'approved'; principalId: string; answered: number }
    | { outcome: 'not_found' | 'not_pending' | 'unknown_principal' }
    | { outcome: 'forbidden'; message: string }
  > {
    const req = await this.d.storage.pairing.get(code);
    if (!req) return { outcome: 'not_found' };
    if (req.status !== 'pending' || req.expiresAt.getTime() <= Date.now()) return { outcome: 'not_pending' };
    const target = opts.principalId !== undefined ? await this.d.storage.principals.get(opts.principalId) : null;
    const channelId = `${req.channel}:${req.account}`;
    const policy = await this.policy(channelId);
    const pairingRole = policy?.pairingRole ?? 'member';
    const refusal = approvalRefusal(opts, pairingRole, target);
    if (refusal) return { outcome: 'forbidden', message: refusal };
    if (opts.principalId !== undefined && !target) return { outcome: 'unknown_principal' };
    const role = target ? target.role : (opts.role ?? pairingRole);
    const held = await this.d.storage.pairing.held(code);
    const principalId = target?.id ?? (await this.createPrincipal(req.displayName ?? req.identity, role));
    if (!(await this.d.storage.pairing.decide(code, 'approved', by, principalId))) return { outcome: 'not_pending' };
    const sep = req.identity.indexOf(':');
    await this.d.storage.principals.linkIdentity(principalId, req.identity.slice(0, sep), req.identity.slice(sep + 1));
    if (target) {
      // Someone's existing identity, sessions and grants now answer to this sender too.
      await this.d.storage.audit.append({
        actor: by,
        action: 'pairing.linked',
        target: code,
        detail: { identity: req.identity, principalId, role, privileged: true },
      });
    } else {
      await this.d.storage.audit.append({ actor: by, action: 'pairing.approved', target: code, detail: { identity: req.identity, principalId, role } });
    }
    const turn = combineHeld(code, held);
    await this.notify(
      req,
      turn ? 'You have been approved. Answering your message now.' : 'You have been approved. Send your message again and it will be answered.',
    );
    if (turn) {
      this.limiter.take(`${channelId}|${req.identity}`, policy?.rateLimit ?? { burst: 10, perMinute: 20 }, Date.now(), { force: true });
      await this.d.admit({ ...turn, principalId });
    }
    await this.d.storage.pairing.forgetHeld(code);
    return { outcome: 'approved', principalId, answered: held.length };
  }

  /** Rejects a pairing code: the held messages are discarded and the sender told. */
  async reject(code: string, by: string): Promise<'rejected' | 'not_found' | 'not_pending'> {
    const req = await this.d.storage.pairing.get(code);
    if (!req) return 'not_found';
    if (!(await this.d.storage.pairing.decide(code, 'rejected', by))) return 'not_pending';
    await this.d.storage.audit.append({ actor: by, action: 'pairing.rejected', target: code, detail: { identity: req.identity, discarded: req.heldCount } });
    await this.notify(req, 'Your access request was declined, and your message was discarded.');
    return 'rejected';
  }

  /** Expires overdue codes, telling each sender their message was discarded. */
  async expire(): Promise<number> {
    const due: PairingRequest[] = await this.d.storage.pairing.expired(new Date());
    let n = 0;
    for (const req of due) {
      if (!(await this.d.storage.pairing.decide(req.code, 'expired', 'system'))) continue;
      n++;
      await this.d.storage.audit.append({
        actor: 'system',
        action: 'pairing.expired',
        target: req.code,
        detail: { identity: req.identity, discarded: req.heldCount, reason: 'pairing.codeTtl passed' },
      });
      await this.notify(
        req,
        `Your pairing code ${req.code} expired before an operator approved it, so your message was discarded. Send a new message to get a new code.`,
      );
    }
    return n;
  }
}
