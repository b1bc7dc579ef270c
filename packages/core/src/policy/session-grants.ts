import type { ConversationRef } from '../channel.js';
import { isPermissionMode, modeRank, type PermissionMode } from '../permissions/modes.js';
import type { Session, Storage, StoredRule } from '../storage.js';
import type { Logger } from 'pino';

/** Longest single timer delay Node accepts; longer waits re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What {@link SessionGrants} needs from the wiring. */
export interface SessionGrantsDeps {
  storage: Storage;
  log: Logger;
  /** How long a session grant lasts (`permissions.sessionGrantTtl`). */
  ttlMs: number;
  /** Called after lapsed rules were deleted (so rule caches reload). */
  onRulesChanged(): void;
  /** Tells a conversation something from the gateway (a channel's `notify`). Must not throw. */
  notify?(to: ConversationRef, text: string): Promise<void>;
}

/**
 * Session grants (DESIGN §1: "session-scoped grants expire"): every rule stored at session scope,
 * and a session's mode when it is above the mode the broader scopes give. Each lasts
 * `permissions.sessionGrantTtl` from when it was granted; it is audited (`grant.created`) when
 * granted and (`grant.lapsed`) when it lapses. Rules lapse on a timer, so also while nobody
 * talks, and across restarts (their age is their `createdAt`); a mode grant lapses at the
 * session's next turn. Either way the person is told in their chat at the start of their next
 * turn in that session (the notice waits in the session's settings, so it survives a restart).
 */
export class SessionGrants {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: SessionGrantsDeps) {}

  /** When a rule granted at `createdAt` lapses (epoch ms). */
  expiresAt(createdAt: Date): number {
    return createdAt.getTime() + this.deps.ttlMs;
  }

  /** Whether a stored rule is in force: every rule but a session rule past its TTL. */
  isLive(rule: Pick<StoredRule, 'scopeKind' | 'createdAt'>, now = Date.now()): boolean {
    return rule.scopeKind !== 'session' || now < this.expiresAt(rule.createdAt);
  }

  /** Lapses what is due now and arms the timer for the next one. Call once at start. */
  async start(): Promise<void> {
    await this.sweep();
  }

  /** Audits a newly stored rule as a grant when it is one (session scope), and re-arms the timer. */
  async ruleSaved(rule: StoredRule): Promise<void> {
    if (rule.scopeKind !== 'session' || rule.scopeId === null) return;
    await this.deps.storage.audit.append({
      actor: rule.createdBy,
      action: 'grant.created',
      target: rule.id,
      detail: {
        kind: 'rule',
        sessionId: rule.scopeId,
        rule: rule.rule,
        behavior: rule.behavior,
        expiresAt: new Date(this.expiresAt(rule.createdAt)).toISOString(),
      },
    });
    await this.sweep();
  }

  /**
   * Records a session mode change: a mode above `broader` (what the scopes broader than the
   * session give) is a grant, stamped and audited; any other mode clears the stamp.
   */
  async modeSet(session: Session, mode: PermissionMode, broader: PermissionMode, actor: string): Promise<void> {
    if (modeRank(mode) <= modeRank(broader)) {
      if (session.settings.modeGrantedAt !== undefined) await this.deps.storage.sessions.updateSettings(session.id, { modeGrantedAt: null });
      return;
    }
    const now = Date.now();
    await this.deps.storage.sessions.updateSettings(session.id, { modeGrantedAt: now });
    await this.deps.storage.audit.append({
      actor,
      action: 'grant.created',
      target: session.id,
      detail: { kind: 'mode', sessionId: session.id, mode, above: broader, expiresAt: new Date(now + this.deps.ttlMs).toISOString() },
    });
  }

  /**
   * At the start of a turn: lapses the session's mode grant when it is due (a mode above
   * `broader` without a stamp predates grants and lapses now), then tells the person about every
   * grant that lapsed since their last turn. Returns the session as it now is. Never throws.
   */
  async atTurnStart(session: Session, broader: PermissionMode, to: ConversationRef): Promise<Session> {
    try {
      let s = session;
      const mode = s.settings.mode;
      const granted = s.settings.modeGrantedAt;
      const above = typeof mode === 'string' && isPermissionMode(mode) && modeRank(mode) > modeRank(broader);
      if (above && (typeof granted !== 'number' || Date.now() >= granted + this.deps.ttlMs)) {
        s = await this.deps.storage.sessions.updateSettings(s.id, { mode: null, modeGrantedAt: null });
        await this.deps.storage.audit.append({
          actor: 'system',
          action: 'grant.lapsed',
          target: s.id,
          detail: { kind: 'mode', sessionId: s.id, mode, above: broader },
        });
        this.deps.log.info({ sessionId: s.id, mode }, `session grant lapsed: mode ${mode} of session ${s.id}`);
        s = (await this.addNotice(s.id, `the ${mode} mode of this session (back to ${broader})`)) ?? s;
      }
      const notices = s.settings.grantNotices ?? [];
      if (notices.length === 0) return s;
      s = await this.deps.storage.sessions.updateSettings(s.id, { grantNotices: null });
      const hours = formatTtl(this.deps.ttlMs);
      await this.deps.notify?.(to, `Expired (session grants last ${hours}): ${notices.join('; ')}. You will be asked again where they applied.`);
      return s;
    } catch (err) {
      this.deps.log.error({ err, sessionId: session.id }, 'session grant check failed');
      return session;
    }
  }

  /** Stops the timer (shutdown). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Deletes every session rule past its TTL (audited, noticed), then arms the timer for the next. */
  private async sweep(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    let next = Infinity;
    let changed = false;
    try {
      for (const r of await this.deps.storage.rules.list()) {
        if (r.scopeKind !== 'session') continue;
        const at = this.expiresAt(r.createdAt);
        if (now < at) {
          next = Math.min(next, at);
          continue;
        }
        if (!(await this.deps.storage.rules.delete(r.id))) continue;
        changed = true;
        await this.deps.storage.audit.append({
          actor: 'system',
          action: 'grant.lapsed',
          target: r.id,
          detail: { kind: 'rule', sessionId: r.scopeId, rule: r.rule, behavior: r.behavior, grantedAt: r.createdAt.toISOString() },
        });
        this.deps.log.info({ ruleId: r.id, sessionId: r.scopeId, rule: r.rule }, `session grant lapsed: rule ${r.id} ${r.rule}`);
        if (r.scopeId !== null) await this.addNotice(r.scopeId, `the rule ${r.rule} (${r.behavior})`);
      }
    } catch (err) {
      this.deps.log.error({ err }, 'session grant sweep failed; retrying');
      next = now + Math.min(this.deps.ttlMs, 60_000);
    }
    if (changed) this.deps.onRulesChanged();
    if (next !== Infinity && !this.closed) {
      this.timer = setTimeout(() => void this.sweep(), Math.min(MAX_TIMER_MS, Math.max(0, next - Date.now())));
      this.timer.unref();
    }
  }

  private async addNotice(sessionId: string, what: string): Promise<Session | null> {
    const s = await this.deps.storage.sessions.get(sessionId);
    if (!s) return null; // the session is gone: nobody to tell
    const notices = [...(s.settings.grantNotices ?? []), what].slice(-20);
    return this.deps.storage.sessions.updateSettings(sessionId, { grantNotices: notices });
  }
}

function formatTtl(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
