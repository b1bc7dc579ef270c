import type { Logger } from 'pino';
import type { AcceptResult, Channel, InboundMessage } from '../channel.js';
import type { PairingRequest, PairingStatus, Storage } from '../storage.js';
import { notices } from './notices.js';
import { type ApproveOutcome, type NoticeAddress, type PairingActivity, PairingDesk } from './pairing-desk.js';
import type { ApprovalAsk } from './pairing-rules.js';
import {
  BOUNDARY_FIELDS,
  type BoundaryField,
  type BoundaryPolicy,
  type GateDecision,
  RateLimiter,
  type SenderBuckets,
  SharedRateLimiter,
  decideGate,
} from './policy.js';
import { PrincipalLinker } from './principal-linker.js';
import { RateLimitAudit } from './rate-limit-audit.js';
import { type BoundarySettings, LOCKED_DOWN_POLICY, type PairingSettings } from './settings.js';

/** The gate's outcome counts of one channel account since start. */
export type GateCounters = Record<NonNullable<AcceptResult['gate']>, number>;

/** One boundary field's effective value and where it came from. */
export interface FieldView {
  value: unknown;
  source: 'config' | 'operator';
  updatedBy?: string;
  updatedAt?: string;
}

/** What the boundary service is built from: resolved values (no config) and its collaborators. */
export interface BoundaryServiceOptions {
  storage: Storage;
  log: Logger;
  /** The channel accounts' base policies; replaced with {@link BoundaryService.update} after a reload. */
  settings: BoundarySettings;
  /** The pairing limits and the expiry sweep's interval. */
  pairing: PairingSettings;
  /** Rate-limited messages are audited as one row per sender per window of this many milliseconds. */
  rateLimitWindow: number;
  /** The channel of a channel id, for notices. */
  channel(id: string): Pick<Channel, 'notify'> | undefined;
  /** Queues an admitted message's turn (the router). */
  admit(message: InboundMessage): Promise<AcceptResult>;
  /** Pairing codes issued and decided (the console's live stream). Must not throw. */
  onPairing?: (event: PairingActivity) => void;
}

/** The sender of a message, split: `telegram:42` → type `telegram`, external id `42`. */
function splitIdentity(identity: string): { channelType: string; externalId: string } {
  const sep = identity.indexOf(':');
  return { channelType: identity.slice(0, sep), externalId: identity.slice(sep + 1) };
}

/**
 * The boundary, layer 1 of access control: one gate for every channel, run before anything
 * reaches a runtime. Policies come from the settings (the config's), with operators' overrides
 * winning field by field; decisions are logged, counted and (refusals) audited. Pairing is the
 * {@link PairingDesk}'s.
 */
export class BoundaryService {
  private readonly limiter: SenderBuckets;
  private readonly counters = new Map<string, GateCounters>();
  private readonly cache = new Map<string, BoundaryPolicy>();
  private readonly limitedAudit: RateLimitAudit;
  private readonly linker: PrincipalLinker;
  private readonly desk: PairingDesk;
  private settings: BoundarySettings;
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly options: BoundaryServiceOptions) {
    this.settings = options.settings;
    // Replicas on one database share the buckets; a single process keeps them in memory.
    this.limiter = options.storage.counters ? new SharedRateLimiter(options.storage.counters) : new RateLimiter();
    this.limitedAudit = new RateLimitAudit(options.storage, options.rateLimitWindow, options.log);
    this.linker = new PrincipalLinker(options.storage);
    this.desk = new PairingDesk({
      storage: options.storage,
      log: options.log,
      pairing: options.pairing,
      linker: this.linker,
      limiter: this.limiter,
      notify: (to, text) => this.notify(to, text),
      policy: (channelId) => this.policy(channelId),
      admit: options.admit,
      ...(options.onPairing ? { onActivity: options.onPairing } : {}),
    });
  }

  /** Starts the expiry sweep of pairing requests and the rate-limit audit's window. */
  start(): void {
    this.sweep = setInterval(() => {
      void this.expire().catch((err: unknown) => this.options.log.error({ err }, 'pairing expiry sweep failed'));
      void this.sweepCounters().catch((err: unknown) => this.options.log.error({ err }, 'shared counters sweep failed'));
    }, this.options.pairing.sweepInterval);
    this.sweep.unref();
    this.limitedAudit.start();
  }

  /** Stops the timers and writes the rate-limit counts still in memory. */
  async stop(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    await this.limitedAudit.stop();
  }

  /** After a config reload (SIGHUP): the new settings are in force from the next message. */
  update(settings: BoundarySettings): void {
    this.settings = settings;
    this.cache.clear();
  }

  /** The gate's outcome counts of a channel account (live object, zero at start). */
  counts(channelId: string): GateCounters {
    let counters = this.counters.get(channelId);
    if (!counters) {
      counters = { admitted: 0, pairing: 0, held: 0, refused: 0, rate_limited: 0, ignored: 0 };
      this.counters.set(channelId, counters);
    }
    return counters;
  }

  /** The effective policy of a channel account (null for an unknown one). */
  async policy(channelId: string): Promise<BoundaryPolicy | null> {
    const cached = this.cache.get(channelId);
    if (cached) return cached;
    const base = this.settings.accounts.get(channelId);
    if (!base) return null;
    const effective: Record<string, unknown> = { ...base };
    for (const override of await this.options.storage.policies.list(channelId)) effective[override.field] = override.value;
    const policy = effective as unknown as BoundaryPolicy;
    this.cache.set(channelId, policy);
    return policy;
  }

  /** Each field's effective value and where it came from. */
  async policyView(channelId: string): Promise<Record<BoundaryField, FieldView> | null> {
    const base = this.settings.accounts.get(channelId);
    if (!base) return null;
    const overrides = new Map((await this.options.storage.policies.list(channelId)).map((override) => [override.field, override]));
    const view = {} as Record<BoundaryField, FieldView>;
    for (const field of BOUNDARY_FIELDS) {
      const override = overrides.get(field);
      view[field] = override
        ? { value: override.value, source: 'operator', updatedBy: override.updatedBy, updatedAt: override.updatedAt.toISOString() }
        : { value: base[field], source: 'config' };
    }
    return view;
  }

  /** Applies operator overrides (already validated); live from the next message. */
  async setPolicy(channelId: string, patch: Partial<BoundaryPolicy>, by: string): Promise<void> {
    for (const [field, value] of Object.entries(patch)) {
      if (value !== undefined) await this.options.storage.policies.set(channelId, field, value, by);
    }
    this.cache.delete(channelId);
    await this.options.storage.audit.append({ actor: by, action: 'policy.update', target: channelId, detail: patch });
  }

  /** Removes an override: the field falls back to the config. */
  async clearPolicy(channelId: string, field: BoundaryField, by: string): Promise<boolean> {
    const removed = await this.options.storage.policies.remove(channelId, field);
    this.cache.delete(channelId);
    if (removed) await this.options.storage.audit.append({ actor: by, action: 'policy.reset', target: channelId, detail: { field } });
    return removed;
  }

  /** Sends a notice to a conversation; one that cannot be delivered is logged, never thrown. */
  private async notify(to: NoticeAddress, text: string): Promise<void> {
    try {
      await this.options.channel(`${to.channel}:${to.account}`)?.notify(to.conversation, text);
    } catch (err) {
      this.options.log.warn({ err }, 'notice not delivered');
    }
  }

  /**
   * Runs the gate for one inbound message, with its side effects (pairing, notices, linking):
   * a redelivery is answered as before; otherwise the policy decides, the sender's bucket pays,
   * and the decision is carried out.
   */
  async accept(message: InboundMessage): Promise<AcceptResult> {
    const redelivery = await this.redelivery(message);
    if (redelivery) return redelivery;
    const channelId = `${message.channel}:${message.account}`;
    const policy = (await this.policy(channelId)) ?? LOCKED_DOWN_POLICY;
    const { channelType, externalId } = splitIdentity(message.sender.identity);
    const known = message.principalId ? null : await this.options.storage.principals.byIdentity(channelType, externalId);
    const decision = decideGate(policy, {
      kind: message.kind,
      isBot: message.sender.isBot,
      mentioned: message.mentioned,
      externalId: externalId.includes(':') ? externalId.slice(externalId.lastIndexOf(':') + 1) : externalId,
      conversationId: message.conversation.id,
      principalId: message.principalId ?? known?.id ?? null,
      authenticated: message.principalId !== undefined,
    });
    const log = this.options.log.child({ channel: channelId, identity: message.sender.identity, dedupeKey: message.dedupeKey });
    if (decision.decision === 'ignored') {
      log.info({ gate: 'ignored', reason: decision.reason }, 'gate: ignored');
      return this.outcome(channelId, 'ignored');
    }
    // Every outcome that costs the gateway something (a turn, a notice, a held row, an audit
    // row) takes a token from the sender's bucket first.
    if (!(await this.takeToken(message, channelId, policy, decision, log))) return this.outcome(channelId, 'rate_limited');
    return this.carryOut(decision, message, channelId, policy, log);
  }

  /**
   * A redelivery of an admitted item is answered from the inbox (no second gate decision, no
   * rate-limit token, no second notice); likewise one of a message held for pairing. Null: new.
   */
  private async redelivery(message: InboundMessage): Promise<AcceptResult | null> {
    const { storage } = this.options;
    const seen = await storage.turns.seen(message.channel, message.account, message.dedupeKey, message.text);
    if (seen) return { ...seen, gate: 'admitted' };
    if (message.principalId) return null;
    const heldBy = await storage.pairing.heldSeen(message.channel, message.account, message.sender.identity, message.dedupeKey);
    return heldBy ? this.desk.redelivered(heldBy) : null;
  }

  /** Takes the sender's rate-limit token; when the bucket is empty, audits (and once per spell tells) them and returns false. */
  private async takeToken(message: InboundMessage, channelId: string, policy: BoundaryPolicy, decision: GateDecision, log: Logger): Promise<boolean> {
    const limited = await this.limiter.take(`${channelId}|${message.sender.identity}`, policy.rateLimit);
    if (limited.ok) return true;
    log.info({ gate: 'rate_limited', outcome: decision.decision }, 'gate: rate limited');
    await this.limitedAudit.record(channelId, message.sender.identity);
    if (limited.warn) await this.notify(message, notices.rateLimited());
    return false;
  }

  /** Carries out a decision that passed the rate limit: refuse (audited, told), pair, or admit (linking an allowlisted sender). */
  private async carryOut(decision: GateDecision, message: InboundMessage, channelId: string, policy: BoundaryPolicy, log: Logger): Promise<AcceptResult> {
    switch (decision.decision) {
      case 'refused':
        log.info({ gate: 'refused', reason: decision.reason }, 'gate: refused');
        await this.options.storage.audit.append({
          actor: 'gateway',
          action: 'gate.refused',
          target: channelId,
          detail: { identity: message.sender.identity, reason: decision.reason },
        });
        if (decision.notify) await this.notify(message, decision.notify);
        return this.outcome(channelId, 'refused');
      case 'pairing': {
        const paired = await this.desk.request(message, channelId, log);
        return this.outcome(channelId, paired.gate, paired.duplicate);
      }
      case 'admitted': {
        let principalId = decision.principalId;
        if (decision.autoLink && !principalId) {
          const { channelType, externalId } = splitIdentity(message.sender.identity);
          principalId = await this.linker.autoLink(channelType, externalId, message.sender.displayName, policy.pairingRole);
        }
        this.counts(channelId).admitted++;
        log.debug({ gate: 'admitted' }, 'gate: admitted');
        const admitted = await this.options.admit(principalId ? { ...message, principalId } : message);
        return { ...admitted, gate: 'admitted' };
      }
      default:
        return this.outcome(channelId, 'ignored');
    }
  }

  /** A gate outcome that queued nothing, counted unless it repeats one already counted. */
  private outcome(channelId: string, gate: Exclude<NonNullable<AcceptResult['gate']>, 'admitted'>, duplicate = false): AcceptResult {
    if (!duplicate) this.counts(channelId)[gate]++;
    return { duplicate, inboxId: '', turnId: null, sessionId: null, gate };
  }

  /** Pairing requests (operators' view). */
  list(filter: { status?: PairingStatus; channel?: string; account?: string }): Promise<PairingRequest[]> {
    return this.desk.list(filter);
  }

  /** Approves a pairing code ({@link PairingDesk.approve}). */
  approve(code: string, ask: ApprovalAsk, by: string): Promise<ApproveOutcome> {
    return this.desk.approve(code, ask, by);
  }

  /** Rejects a pairing code: the held messages are discarded and the sender told. */
  reject(code: string, by: string): Promise<'rejected' | 'not_found' | 'not_pending'> {
    return this.desk.reject(code, by);
  }

  /** Expires overdue codes, telling each sender their message was discarded; returns how many expired. */
  expire(): Promise<number> {
    return this.desk.expire();
  }

  /**
   * Deletes the shared counters' rows that carry nothing any more (full buckets, failed-auth
   * windows that are over; on the pairing sweep's interval); returns how many went. Without shared
   * counters (SQLite) the in-memory limiters bound themselves: 0.
   */
  async sweepCounters(now = Date.now()): Promise<number> {
    return (await this.options.storage.counters?.sweep(now)) ?? 0;
  }
}
