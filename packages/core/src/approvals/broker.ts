import type { Logger } from 'pino';
import type { ConversationRef } from '../channel.js';
import type { AskSource } from '@switchboard/agent';
import { storedAlwaysRules } from '../permissions/always-rules.js';
import { mayAnswerAutomatically, offersAlways, whyPeopleOnly } from '../permissions/ask-source.js';
import { needsAdminApproval } from '../memory/access.js';
import type { Approval, ApprovalStatus, Role, Scope, Storage, StoredRule } from '../storage.js';

/** Who is answering an approval. Resolved from authenticated input, never from the model. */
export type Approver =
  | { kind: 'principal'; principalId: string; role: Role }
  | { kind: 'operator'; tokenName: string; scopes: readonly Scope[] }
  | { kind: 'hook'; name: string };

export type DecideOutcome =
  | { outcome: 'decided'; approval: Approval }
  | { outcome: 'already_decided'; approval: Approval }
  | { outcome: 'forbidden'; reason: string }
  /** The answer does not fit the approval (a choice it does not offer, "always allow" where none is offered). */
  | { outcome: 'invalid'; reason: string }
  | { outcome: 'not_found' };

export interface ApprovalDecision {
  allowed: boolean;
  by: string;
  reason?: string;
  /** The option an allow chose, for an approval with choices. */
  choice?: string;
}

/**
 * How an approval request ended: the decision, and the approval the request created (or, for a
 * resumed turn, found) as the broker last saw it — settled (allowed, denied, expired, cancelled)
 * when a decision ended the wait; still pending when the turn's signal ended it.
 */
export interface ApprovalOutcome extends ApprovalDecision {
  approval: Approval;
}

export interface ApprovalRequest {
  turnId: string;
  toolUseId: string;
  sessionId: string;
  agentId: string;
  channelId: string;
  tool: string;
  /** What "always allow" saves: rules that match exactly this call (or a `web_fetch` call's domain), in stored form (see `alwaysRuleFor`). */
  alwaysRule: string;
  summary: string;
  input: unknown;
  /** Which pipeline step asked; automatic responders are consulted only for `mode`. */
  source: AskSource;
  /** The options an allow chooses between (a plan approval: modes, least trusted first; an allow without a choice takes the first). */
  choices?: readonly string[];
  requesterPrincipalId: string | null;
  conversation: ConversationRef;
  signal: AbortSignal;
  /** Shows the request to the requester's chat (render events). Must not throw. */
  notify(approval: Approval): void;
  /**
   * Optional automatic responder (PermissionRequest hooks): resolves to a decision or undefined.
   * Called only when `mayAnswerAutomatically(approval.source)`; other asks wait for people.
   */
  autoResponder?: (approval: Approval) => Promise<{ decision: 'allow' | 'deny'; reason?: string; name: string } | undefined>;
}

export interface ApprovalBrokerOptions {
  storage: Storage;
  log: Logger;
  /** How long an approval waits before it becomes a denial. */
  timeoutMs: number;
  /** Roles whose members may approve their own requests. Owners and admins may approve anyone's. */
  selfApproveRoles: readonly Role[];
  /** Called after a rule was saved by "always allow" (so rule caches reload). */
  onRuleSaved?: (rule: StoredRule) => void;
  /**
   * A channel account's shorter wait (`Channel.approvalWait`, by `<type>:<account>`): its approvals
   * expire after `timeoutMs` (when shorter than `timeoutMs` above) with `note` as the reason.
   */
  channelWait?: (channelId: string) => { timeoutMs: number; note: string } | undefined;
  /**
   * Called once per approval, when this broker's claim decided it (allowed, denied, expired or
   * cancelled), before its waiters hear of it (metrics). Contract: must not throw (a throw is logged and ignored).
   */
  onDecided?: (status: Exclude<ApprovalStatus, 'pending'>) => void;
  /**
   * Told when an approval starts waiting in this process (`requested`, also for a resumed turn's)
   * and once when this broker's claim decided it (`decided`): the console's live stream. Contract:
   * must not throw (a throw is logged and ignored).
   */
  onActivity?: (event: ApprovalActivity) => void;
}

/** What {@link ApprovalBrokerOptions.onActivity} is told. */
export interface ApprovalActivity {
  type: 'requested' | 'decided';
  approvalId: string;
  status: ApprovalStatus;
}

const actorName = (a: Approver): string =>
  a.kind === 'principal' ? `principal:${a.principalId}` : a.kind === 'operator' ? `operator:${a.tokenName}` : `hook:${a.name}`;

/**
 * Approvals are decision slots several responders race for (the requester's chat, an operator,
 * a hook). The first decision claims the slot atomically in the store; every later one is told
 * it was already decided. Pending approvals expire into denials.
 */
export class ApprovalBroker {
  private readonly waiters = new Map<string, Set<(outcome: ApprovalOutcome) => void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** How many approval waits each turn has open (a turn's subagents may wait at once). */
  private readonly turnWaits = new Map<string, number>();

  constructor(private readonly options: ApprovalBrokerOptions) {}

  /** A wait for an approval of `turnId` begins (see {@link waitEnded}). */
  waitStarted(turnId: string): void {
    this.turnWaits.set(turnId, (this.turnWaits.get(turnId) ?? 0) + 1);
  }

  /** A wait of `turnId` ends; true when it was the turn's last open wait (the turn runs again). */
  waitEnded(turnId: string): boolean {
    const left = (this.turnWaits.get(turnId) ?? 1) - 1;
    if (left > 0) {
      this.turnWaits.set(turnId, left);
      return false;
    }
    this.turnWaits.delete(turnId);
    return true;
  }

  /** Creates (or, for a resumed turn, finds) the approval and waits for its decision; returns both. */
  async request(req: ApprovalRequest): Promise<ApprovalOutcome> {
    const { approval, existed } = await this.options.storage.approvals.create({
      turnId: req.turnId,
      toolUseId: req.toolUseId,
      sessionId: req.sessionId,
      tool: req.tool,
      summary: req.summary,
      input: req.input,
      source: req.source,
      alwaysRule: req.alwaysRule,
      ...(req.choices ? { choices: req.choices } : {}),
      requesterPrincipalId: req.requesterPrincipalId,
      conversation: req.conversation,
      expiresAt: new Date(Date.now() + Math.min(this.options.timeoutMs, this.options.channelWait?.(req.channelId)?.timeoutMs ?? Number.POSITIVE_INFINITY)),
    });
    if (approval.status !== 'pending') return outcomeOf(approval);
    if (!existed) {
      await this.options.storage.audit.append({
        actor: 'gateway',
        action: 'approval.requested',
        target: approval.id,
        detail: { tool: req.tool, summary: req.summary, source: approval.source },
      });
    }
    const waiting = new Promise<ApprovalOutcome>((resolve) => {
      let set = this.waiters.get(approval.id);
      if (!set) this.waiters.set(approval.id, (set = new Set()));
      set.add(resolve);
    });
    this.armExpiry(approval);
    req.notify(approval);
    this.meta.set(approval.id, { agentId: req.agentId, channelId: req.channelId });
    this.activity({ type: 'requested', approvalId: approval.id, status: 'pending' });
    if (req.autoResponder && !mayAnswerAutomatically(approval.source)) {
      this.options.log.info(
        { approvalId: approval.id, tool: req.tool, source: approval.source },
        `approval ${approval.id} waits for a person; automatic responders may not answer it: ${whyPeopleOnly(approval.source)}`,
      );
    } else if (req.autoResponder) {
      void req
        .autoResponder(approval)
        .then(async (r) => {
          if (r) await this.decide(approval.id, r.decision, false, { kind: 'hook', name: r.name }, r.reason);
        })
        .catch((err: unknown) => this.options.log.warn({ err, approvalId: approval.id }, 'automatic approval responder failed'));
    }
    const aborted = new Promise<ApprovalOutcome>((resolve) => {
      const onAbort = () => resolve({ allowed: false, by: 'system', reason: 'the turn was stopped', approval });
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([waiting, aborted]);
  }

  private readonly meta = new Map<string, { agentId: string; channelId: string }>();

  /** Whether this approver may answer this approval. */
  mayDecide(approval: Approval, who: Approver): { ok: true } | { ok: false; reason: string } {
    if (who.kind === 'hook') {
      return mayAnswerAutomatically(approval.source)
        ? { ok: true }
        : { ok: false, reason: `automatic responders may not answer this approval: ${whyPeopleOnly(approval.source)}` };
    }
    if (who.kind === 'operator') {
      return who.scopes.includes('approvals') || who.scopes.includes('admin')
        ? { ok: true }
        : { ok: false, reason: 'this operator token lacks the "approvals" scope' };
    }
    if (who.role === 'owner' || who.role === 'admin') return { ok: true };
    // A member's change to team memory needs an owner or admin: never the requester's own answer.
    if (needsAdminApproval(approval)) return { ok: false, reason: 'only an owner or admin may approve a change to team memory' };
    if (who.principalId === approval.requesterPrincipalId && this.options.selfApproveRoles.includes(who.role)) return { ok: true };
    return {
      ok: false,
      reason:
        who.principalId === approval.requesterPrincipalId
          ? `your role (${who.role}) may not approve tool calls`
          : 'only the requester or an admin may answer this approval',
    };
  }

  /**
   * Answers an approval. Exactly one caller ever gets `decided`; the side effect (the waiting
   * tool call) runs only for that one. `choice` picks one of the approval's `choices` (an allow
   * without one takes the first, the least trusted); an approval without choices takes none, and
   * one that offers no "always allow" (a plan) refuses `always` — both `invalid`, nothing claimed.
   */
  async decide(id: string, decision: 'allow' | 'deny', always: boolean, who: Approver, reason?: string, choice?: string): Promise<DecideOutcome> {
    const approval = await this.options.storage.approvals.get(id);
    if (!approval) return { outcome: 'not_found' };
    const may = this.mayDecide(approval, who);
    if (!may.ok) return { outcome: 'forbidden', reason: may.reason };
    const invalid = invalidAnswer(approval, decision, always, choice);
    if (invalid) return { outcome: 'invalid', reason: invalid };
    if (approval.status !== 'pending') return { outcome: 'already_decided', approval };
    const by = actorName(who);
    const chosen = decision === 'allow' && approval.choices ? (choice ?? approval.choices[0]) : undefined;
    const won = await this.options.storage.approvals.claim(id, decision === 'allow' ? 'allowed' : 'denied', by, {
      always: always && decision === 'allow',
      ...(reason ? { reason } : {}),
      ...(chosen !== undefined ? { choice: chosen } : {}),
    });
    if (won) this.claimed(id, decision === 'allow' ? 'allowed' : 'denied');
    const after = (await this.options.storage.approvals.get(id))!;
    if (!won) return { outcome: 'already_decided', approval: after };
    await this.options.storage.audit.append({
      actor: by,
      action: 'approval.decided',
      target: id,
      detail: { decision, always, tool: approval.tool, summary: approval.summary, ...(chosen !== undefined ? { choice: chosen } : {}) },
    });
    if (always && decision === 'allow') await this.saveAlwaysRule(after, who);
    this.settle(after);
    return { outcome: 'decided', approval: after };
  }

  /** "Always allow" saves a rule no wider than the approver's own authority (DESIGN.md §1). */
  private async saveAlwaysRule(a: Approval, who: Approver): Promise<void> {
    const m = this.meta.get(a.id);
    const rule = a.alwaysRule;
    if (rule === null) {
      // An approval stored before the exact rule was recorded: no rule rather than a guessed, wider one.
      this.options.log.warn(
        { approvalId: a.id, tool: a.tool },
        '"always allow" saved no rule: this approval predates exact rules; the call itself was allowed',
      );
      await this.options.storage.audit.append({
        actor: actorName(who),
        action: 'rule.not_saved',
        target: a.id,
        detail: { tool: a.tool, reason: 'the approval predates exact always-allow rules' },
      });
      return;
    }
    const rules = storedAlwaysRules(rule);
    if (rules.length === 0) {
      // A call whose parts could not be generalised safely (see `alwaysRuleFor`): the call itself was allowed.
      this.options.log.info({ approvalId: a.id, tool: a.tool }, '"always allow" saved no rule: this call cannot be saved as a rule safely');
      await this.options.storage.audit.append({
        actor: actorName(who),
        action: 'rule.not_saved',
        target: a.id,
        detail: { tool: a.tool, reason: 'a part of the call depends on what runs before it, so no rule could match only what was approved' },
      });
      return;
    }
    let scopeKind: StoredRule['scopeKind'];
    let scopeId: string | null;
    if (who.kind === 'operator' && who.scopes.includes('admin')) {
      scopeKind = 'agent';
      // Decided in another process than the one waiting (a replica, or after a restart): the agent is the session's.
      scopeId = m?.agentId ?? (await this.options.storage.sessions.get(a.sessionId))?.agentId ?? null;
    } else if (who.kind === 'principal' && (who.role === 'owner' || who.role === 'admin') && who.principalId !== a.requesterPrincipalId) {
      scopeKind = 'conversation';
      scopeId = `${a.conversation.channel}:${a.conversation.account}:${a.conversation.id}`;
    } else if (a.requesterPrincipalId) {
      scopeKind = 'principal';
      scopeId = a.requesterPrincipalId;
    } else {
      scopeKind = 'session';
      scopeId = a.sessionId;
    }
    for (const one of rules) {
      const saved = await this.options.storage.rules.create({ scopeKind, scopeId, behavior: 'allow', rule: one, createdBy: actorName(who) });
      await this.options.storage.audit.append({
        actor: actorName(who),
        action: 'rule.created',
        target: saved.id,
        detail: { scopeKind, scopeId, behavior: 'allow', rule: one, via: a.id },
      });
      this.options.onRuleSaved?.(saved);
    }
  }

  private armExpiry(a: Approval): void {
    if (this.timers.has(a.id)) return;
    const ms = Math.max(0, a.expiresAt.getTime() - Date.now());
    const t = setTimeout(() => {
      this.timers.delete(a.id);
      // The channel's own note (e.g. the OpenAI channel's approvalWait) tells the model why nobody answered.
      const note = this.options.channelWait?.(`${a.conversation.channel}:${a.conversation.account}`)?.note;
      void (async () => {
        if (await this.options.storage.approvals.claim(a.id, 'expired', 'system', { reason: note ?? 'expired' })) {
          this.claimed(a.id, 'expired');
          await this.options.storage.audit.append({ actor: 'system', action: 'approval.expired', target: a.id, detail: { tool: a.tool } });
        }
        const after = await this.options.storage.approvals.get(a.id);
        if (after) this.settle(after);
      })().catch((err: unknown) => this.options.log.error({ err, approvalId: a.id }, 'approval expiry failed'));
    }, ms);
    t.unref();
    this.timers.set(a.id, t);
  }

  /** Tells `onDecided` of a claim this broker won. */
  private claimed(id: string, status: Exclude<ApprovalStatus, 'pending'>): void {
    try {
      this.options.onDecided?.(status);
    } catch (err) {
      this.options.log.error({ err, approvalId: id }, 'the approval-decided observer failed');
    }
    this.activity({ type: 'decided', approvalId: id, status });
  }

  private activity(event: ApprovalActivity): void {
    try {
      this.options.onActivity?.(event);
    } catch (err) {
      this.options.log.error({ err, approvalId: event.approvalId }, 'the approval activity observer failed');
    }
  }

  private settle(a: Approval): void {
    const t = this.timers.get(a.id);
    if (t) clearTimeout(t);
    this.timers.delete(a.id);
    this.meta.delete(a.id);
    const set = this.waiters.get(a.id);
    this.waiters.delete(a.id);
    for (const resolve of set ?? []) resolve(outcomeOf(a));
  }

  /**
   * Another process (a replica on the same database) may have decided approval `id`: when this
   * broker has a turn waiting for it and the store says it is no longer pending, the waiters hear
   * the stored decision now. True when it woke a waiter. Never rejects for an unknown id.
   */
  async refresh(id: string): Promise<boolean> {
    if (!this.waiters.has(id)) return false;
    const after = await this.options.storage.approvals.get(id);
    if (!after || after.status === 'pending' || !this.waiters.has(id)) return false;
    this.settle(after);
    return true;
  }

  /** {@link refresh} for every approval a turn here waits for (decisions announced while this process was not listening). */
  async refreshWaiting(): Promise<number> {
    let woke = 0;
    for (const id of [...this.waiters.keys()]) if (await this.refresh(id)) woke++;
    return woke;
  }

  /**
   * The turn that asked has ended (stopped, failed or finished) before anyone decided: each of its
   * pending approvals becomes `cancelled` through the same atomic claim as a decision (audited
   * `approval.cancelled`), so a later decision is told `already_decided`. Returns how many this
   * call cancelled. A turn suspended for shutdown is not ended: its approvals stay pending.
   */
  async cancelTurn(turnId: string, reason: string): Promise<number> {
    const pending = await this.options.storage.approvals.list({ turnId, status: 'pending', limit: 500 });
    let cancelled = 0;
    for (const a of pending) {
      if (await this.options.storage.approvals.claim(a.id, 'cancelled', 'system', { reason })) {
        cancelled++;
        this.claimed(a.id, 'cancelled');
        await this.options.storage.audit.append({
          actor: 'system',
          action: 'approval.cancelled',
          target: a.id,
          detail: { tool: a.tool, summary: a.summary, reason },
        });
      }
      const after = await this.options.storage.approvals.get(a.id);
      if (after) this.settle(after);
    }
    return cancelled;
  }

  /**
   * At start-up: cancels every pending approval whose turn has already ended (or is gone), e.g.
   * left by a version that did not cancel them. Such an approval could never be used, and
   * nothing would ever expire it. Returns how many were cancelled.
   */
  async cancelEnded(): Promise<number> {
    const stale = new Set<string>();
    for (let offset = 0; ; offset += 500) {
      const page = await this.options.storage.approvals.list({ status: 'pending', limit: 500, offset });
      for (const a of page) {
        const turn = await this.options.storage.turns.get(a.turnId);
        if (!turn || ENDED_TURN_STATES.has(turn.state)) stale.add(a.turnId);
      }
      if (page.length < 500) break;
    }
    let cancelled = 0;
    for (const turnId of stale) cancelled += await this.cancelTurn(turnId, 'its turn had already ended');
    return cancelled;
  }

  /** Stops expiry timers (shutdown); pending approvals stay pending in the store. */
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

/** Turn states after which nothing can use an approval any more. */
const ENDED_TURN_STATES: ReadonlySet<string> = new Set(['completed', 'failed', 'interrupted']);

function outcomeOf(approval: Approval): ApprovalOutcome {
  return { ...decisionOf(approval), approval };
}

/** Why an answer does not fit `a` (see `ApprovalBroker.decide`); undefined when it fits. */
function invalidAnswer(a: Approval, decision: 'allow' | 'deny', always: boolean, choice: string | undefined): string | undefined {
  if (always && !offersAlways(a.source)) return 'this approval cannot be always allowed: it is a one-off decision, never saved as a rule';
  if (choice === undefined) return undefined;
  if (decision !== 'allow') return 'a choice goes with an allow only';
  if (!a.choices) return 'this approval offers no choices';
  if (!a.choices.includes(choice)) return `choose one of: ${a.choices.join(', ')}`;
  return undefined;
}

function decisionOf(a: Approval): ApprovalDecision {
  if (a.status === 'allowed') return { allowed: true, by: a.decidedBy ?? 'unknown', ...(a.choice !== null ? { choice: a.choice } : {}) };
  return {
    allowed: false,
    by: a.decidedBy ?? 'system',
    reason:
      a.status === 'expired'
        ? a.reason && a.reason !== 'expired'
          ? a.reason
          : 'nobody answered the approval in time'
        : a.status === 'cancelled'
          ? `the approval was cancelled: ${a.reason ?? 'its turn ended'}`
          : (a.reason ?? 'the approval was declined'),
  };
}
