import {
  type ApprovalBroker,
  DenialTracker,
  canSetMode,
  decidePermission,
  describeLimit,
  exactRuleFor,
  isPermissionMode,
  preFilter,
  preToolUseFromHooks,
  resolveMode,
  runHooks,
  scopesOf,
  toDecision,
  type BoundaryPolicy,
  type ConversationRef,
  toolMatchKind,
  suspendedForShutdown,
  walkFilter,
  type HooksConfig,
  type ModeResolution,
  type ScopeModes,
  type PermissionMode,
  type PermissionScope,
  type PipelineResult,
  type RuleSet,
  type ScopedRule,
  type Session,
  type Storage,
  type StoredRule,
  type TurnPolicy,
  type TurnPolicyContext,
  type WorkspaceDirectories,
} from '@switchboard/core';
import { ownValue } from '@switchboard/core';
import type { AnyTool, AskSource, Decision } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { principalMode } from './scope-modes.js';
import { SessionGrants } from './session-grants.js';

export interface PolicyDeps {
  /** The config in force, read on every use (the gateway passes its `LiveConfig`'s current one); rules, modes and ceilings follow reloads. */
  cfg: Readonly<Config>;
  storage: Storage;
  broker: ApprovalBroker;
  log: Logger;
  /** Removes secrets from text shown in approvals and the audit log. */
  scrub(s: string): string;
  configFile: string | undefined;
  databaseFile: string;
  /** Expands a `group:*` rule into per-tool rules (the capability registry); other rules pass through. */
  expandRule?(rule: string): string[];
  /** The effective boundary policy of a channel account (config with operators' overrides): its `permissionMode` and rooms. */
  boundaryPolicy?(channelId: string): Promise<BoundaryPolicy | null>;
  /** Where each turn's file tools work (per person, per room, or shared). */
  workspaces: WorkspaceDirectories;
  /** Tells a conversation something from the gateway (lapsed session grants). Must not throw. */
  notify?(to: ConversationRef, text: string): Promise<void>;
}

/** Where one turn or session stands, for mode resolution: everything comes from the inbound message. */
export interface ModeContext {
  session: Session;
  /** The speaker's role (`guest` without a principal). */
  role: string;
  /** The speaker's principal, if any. */
  principalId?: string | undefined;
  /** `<type>:<account>`. */
  channelId: string;
  conversation: Pick<ConversationRef, 'channel' | 'account' | 'id' | 'kind'>;
}

const NO_FILE_TOOLS =
  'file tools are not available to this sender: in a room, only people the gateway knows (paired or allowlisted principals) get file tools, ' +
  'so this call was refused. Answer without reading or writing files';

const conversationId = (c: { channel: string; account: string; id: string }) => `${c.channel}:${c.account}:${c.id}`;

/** A session's own mode setting as a scope entry (none when unset or not a mode). */
const sessionModeOf = (session: Session): { id: string; mode: PermissionMode } | undefined =>
  isPermissionMode(session.settings.mode) ? { id: session.id, mode: session.settings.mode } : undefined;

/** The principal whose message a turn answers: the message's own; a DM session's owner only for a DM. */
const speakerOf = (ctx: Pick<TurnPolicyContext, 'message' | 'session'>): string | undefined =>
  ctx.message.principalId ?? (ctx.message.kind === 'dm' && ctx.session.scope === 'dm' ? (ctx.session.principalId ?? undefined) : undefined);

/**
 * The action layer (DESIGN.md §1, layer 2): for each turn, the tools the model may see, the
 * deny-first decision for every tool_use, approvals for asks, hooks, and denial tracking.
 */
export class PolicyService {
  private rulesCache: RuleSet | null = null;
  /** When the earliest session rule in the cache lapses (the cache is rebuilt then). */
  private rulesLiveUntil = Infinity;
  /** Session grants: their expiry, audit and notices. */
  readonly grants: SessionGrants;
  private readonly denials: DenialTracker;
  private readonly hooks: HooksConfig;
  private readonly hookEnv: Record<string, string>;

  constructor(private readonly d: PolicyDeps) {
    this.denials = new DenialTracker(d.cfg.permissions.denialLimits);
    this.hooks = d.cfg.hooks as HooksConfig;
    // Hooks get a minimal environment: never the gateway's secrets.
    this.hookEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    this.grants = new SessionGrants({
      storage: d.storage,
      log: d.log,
      ttlMs: d.cfg.permissions.sessionGrantTtl,
      onRulesChanged: () => this.invalidateRules(),
      ...(d.notify ? { notify: d.notify } : {}),
    });
  }

  /** After a rule was stored (control API or "always allow"): reloads rules and audits a session grant. */
  async ruleSaved(rule: StoredRule): Promise<void> {
    this.invalidateRules();
    await this.grants.ruleSaved(rule);
  }

  /** After a session's mode was set (chat `/mode` or the control API): a mode above the broader scopes' is a session grant. */
  async sessionModeSet(c: ModeContext, mode: PermissionMode, actor: string): Promise<void> {
    await this.grants.modeSet(c.session, mode, await this.broaderMode(c), actor);
  }

  /** Where a stored session stands, for mode resolution outside a turn (its own principal; guest without one). */
  async sessionContext(session: Session): Promise<ModeContext> {
    const principal = session.principalId ? await this.d.storage.principals.get(session.principalId) : null;
    return {
      session,
      role: principal?.role ?? 'guest',
      principalId: session.principalId ?? undefined,
      channelId: `${session.channel}:${session.account}`,
      conversation: { channel: session.channel, account: session.account, id: session.conversation ?? '', kind: session.scope },
    };
  }

  /** The mode the scopes broader than the session give (the session's own setting left out). */
  private async broaderMode(c: ModeContext): Promise<PermissionMode> {
    return (await this.resolveMode(c, false)).mode;
  }

  /** Forgets cached database rules (after a rule was created or deleted). */
  invalidateRules(): void {
    this.rulesCache = null;
  }

  /** Every rule in force: config (gateway and agent scopes) and database. */
  async ruleSet(): Promise<RuleSet> {
    if (this.rulesCache && Date.now() < this.rulesLiveUntil) return this.rulesCache;
    let liveUntil = Infinity;
    const out: ScopedRule[] = [];
    const p = this.d.cfg.permissions;
    const expand = (rule: string) => this.d.expandRule?.(rule) ?? [rule];
    const add = (scope: PermissionScope, lists: { allow: string[]; ask: string[]; deny: string[] }) => {
      for (const behavior of ['allow', 'ask', 'deny'] as const) {
        for (const text of lists[behavior]) for (const rule of expand(text)) out.push({ scope, behavior, rule, source: 'config' });
      }
    };
    add({ kind: 'gateway' }, p);
    for (const [id, a] of Object.entries(this.d.cfg.agents)) add({ kind: 'agent', id }, a.permissions);
    for (const r of await this.d.storage.rules.list()) {
      // A session rule past its TTL grants nothing, even before the sweep deletes it.
      if (!this.grants.isLive(r)) continue;
      if (r.scopeKind === 'session') liveUntil = Math.min(liveUntil, this.grants.expiresAt(r.createdAt));
      const scope: PermissionScope = r.scopeId === null ? { kind: r.scopeKind } : { kind: r.scopeKind, id: r.scopeId };
      for (const rule of expand(r.rule))
        out.push({ scope, behavior: r.behavior, rule, source: r.createdBy.startsWith('operator:') ? 'database' : 'approval', id: r.id });
    }
    this.rulesCache = out;
    this.rulesLiveUntil = liveUntil;
    return out;
  }

  /** The room settings of a conversation (own-property lookup: room ids come from outside). */
  private async room(channelId: string, conversation: ModeContext['conversation']): Promise<BoundaryPolicy['groups'][string] | undefined> {
    if (conversation.kind !== 'room') return undefined;
    const policy = await this.d.boundaryPolicy?.(channelId);
    return policy ? ownValue(policy.groups, conversation.id) : undefined;
  }

  /**
   * The mode in force for one speaker in one conversation: the least trusted of the role's
   * ceiling (`permissions.roleCeilings`) and the mode of every scope — gateway, agent, channel
   * account (`permissionMode`, operator overrides included), room (`groups.<id>.mode`), principal
   * (control API) and, unless `withSession` is false, session.
   */
  async resolveMode(c: ModeContext, withSession = true): Promise<ModeResolution> {
    const modes = await this.scopeModes(c);
    return resolveMode(withSession ? modes : { ...modes, session: undefined }, c.role, this.d.cfg.permissions.roleCeilings);
  }

  /** Every scope's mode setting for `c` (read once; the session's from `c.session`). */
  private async scopeModes(c: ModeContext): Promise<ScopeModes> {
    const cfg = this.d.cfg;
    const policy = await this.d.boundaryPolicy?.(c.channelId);
    const room = await this.room(c.channelId, c.conversation);
    const agent = Object.hasOwn(cfg.agents, c.session.agentId) ? cfg.agents[c.session.agentId] : undefined;
    return {
      gateway: cfg.permissions.mode,
      agent: { id: c.session.agentId, mode: agent?.mode },
      channel: { id: c.channelId, mode: policy?.permissionMode ?? undefined },
      conversation: { id: conversationId(c.conversation), mode: room?.mode },
      ...(c.principalId ? { principal: { id: c.principalId, mode: await principalMode(this.d.storage, c.principalId) } } : {}),
      session: sessionModeOf(c.session),
    };
  }

  /** The mode in force (see {@link resolveMode}). */
  async modeFor(c: ModeContext): Promise<PermissionMode> {
    return (await this.resolveMode(c)).mode;
  }

  /** Whether a person may set their own session to `mode`: at most their role's ceiling and what the broader scopes give. */
  async checkModeChange(c: ModeContext, mode: string): Promise<{ ok: true; mode: PermissionMode } | { ok: false; reason: string }> {
    if (!isPermissionMode(mode)) return { ok: false, reason: `unknown mode "${mode}": use plan, dontAsk, default, acceptEdits or bypassPermissions` };
    const broader = await this.resolveMode(c, false);
    const check = canSetMode(c.role, mode, broader.mode, this.d.cfg.permissions.roleCeilings, describeLimit(broader, c.role));
    return check.ok ? { ok: true, mode } : check;
  }

  /** A room's `denyTools` as deny rules at its conversation scope (so the pre-filter hides them and the rules refuse them). */
  private async roomRules(channelId: string, conversation: ModeContext['conversation']): Promise<ScopedRule[]> {
    const room = await this.room(channelId, conversation);
    if (!room) return [];
    const scope: PermissionScope = { kind: 'conversation', id: conversationId(conversation) };
    const expand = (rule: string) => this.d.expandRule?.(rule) ?? [rule];
    return (room.denyTools ?? []).flatMap(expand).map((rule) => ({ scope, behavior: 'deny' as const, rule, source: 'config' as const }));
  }

  private summarize(tool: AnyTool, input: unknown): string {
    let json: string;
    try {
      json = JSON.stringify(input);
    } catch {
      json = '(input not serializable)';
    }
    const body = json.length > 400 ? `${json.slice(0, 400)}…` : json;
    return this.d.scrub(`${tool.name} ${body}`);
  }

  /** Builds the policy of one turn. */
  async forTurn(ctx: TurnPolicyContext): Promise<TurnPolicy> {
    const { session, turn, message, agent } = ctx;
    // The turn acts with the authority of the person whose message it answers: the message's
    // principal, never the session's (in a room, the session belongs to no one in particular).
    const principalId = speakerOf(ctx);
    const principal = principalId ? await this.d.storage.principals.get(principalId) : null;
    const role = principal?.role ?? 'guest';
    const channelId = `${message.channel}:${message.account}`;
    const scopes = scopesOf({
      agent: session.agentId,
      channel: channelId,
      conversation: conversationId(message.conversation),
      role,
      ...(principalId ? { principal: principalId } : {}),
      session: session.id,
    });
    const ruleSet = [...(await this.ruleSet()), ...(await this.roomRules(channelId, message.conversation))];
    // Lapses a due session mode grant and tells the person about lapsed grants (at their next turn).
    // Every scope is read once: the broader mode (without the session's) decides whether a session
    // grant lapses, then the mode in force takes the session's setting as it now is.
    const modes = await this.scopeModes({ session, role, principalId, channelId, conversation: message.conversation });
    const ceilings = this.d.cfg.permissions.roleCeilings;
    const broader = resolveMode({ ...modes, session: undefined }, role, ceilings).mode;
    const live = await this.grants.atTurnStart(session, broader, message.conversation);
    const mode = resolveMode({ ...modes, session: sessionModeOf(live) }, role, ceilings).mode;
    // A room works in the room's directory; a person's DMs in that person's. A room sender the
    // gateway knows no principal for gets no file tools at all.
    const fileless = !principalId;
    const workspace = fileless
      ? this.d.workspaces.none(session.agentId)
      : await this.d.workspaces.ensure(
          session.agentId,
          message.kind === 'room'
            ? { kind: 'room', channel: message.channel, account: message.account, conversation: message.conversation.id }
            : { kind: 'person', principalId },
        );
    const isFileTool = (t: { name: string }) => toolMatchKind(t.name) === 'path';
    const tools = preFilter(agent.tools, ruleSet, scopes).filter((t) => !(fileless && isFileTool(t)));
    const log = this.d.log.child({ sessionId: session.id, turnId: turn.id });
    const hookOpts = { env: this.hookEnv, defaultTimeoutMs: this.d.cfg.permissions.hookTimeout };
    const preToolUse = this.hooks.PreToolUse?.length ? preToolUseFromHooks(this.hooks, log, hookOpts) : undefined;
    let stop: { reason: 'denial_limit'; error: string } | null = null;
    this.denials.startTurn(session.id);
    const audit = (action: string, detail: Record<string, unknown>) =>
      this.d.storage.audit.append({ actor: 'gateway', action, target: turn.id, detail }).catch((err: unknown) => log.error({ err }, 'audit write failed'));
    const basePayload = { sessionId: session.id, turnId: turn.id, agentId: session.agentId };

    const canUseTool = async (tool: AnyTool, input: unknown, tctx: Parameters<TurnPolicy['canUseTool']>[2]): Promise<Decision> => {
      const result: PipelineResult =
        fileless && isFileTool(tool)
          ? { behavior: 'deny', source: 'rule', reason: NO_FILE_TOOLS }
          : await decidePermission(
              { tool, input, ctx: tctx },
              {
                ruleSet,
                scopes,
                mode,
                ...(preToolUse ? { preToolUse } : {}),
                safety: { ...(this.d.configFile ? { configFile: this.d.configFile } : {}), databaseFile: this.d.databaseFile },
              },
            );
      const summary = this.summarize(tool, result.behavior === 'deny' ? input : result.input);
      let decision: Decision;
      if (result.behavior === 'ask') {
        decision = await this.ask(ctx, tool, result.input, result.updatedInput, summary, result.reason, result.source, tctx, log);
      } else {
        decision = toDecision(result);
      }
      await audit('permission.decision', {
        tool: tool.name,
        summary,
        behavior: decision.behavior,
        decidedBy: result.behavior === 'ask' ? 'approval' : result.source,
        reason: decision.behavior === 'deny' ? decision.reason : result.reason,
        rule: result.rule?.rule,
        mode,
      });
      if (decision.behavior === 'deny') {
        void runHooks(
          'PermissionDenied',
          { ...basePayload, toolName: tool.name, toolInput: input, toolUseId: tctx.toolUseId, reason: decision.reason } as never,
          this.hooks,
          log,
          hookOpts,
        );
        const state = this.denials.recordDenial(session.id);
        if (state.signal === 'denial_limit') {
          stop = {
            reason: 'denial_limit',
            error: `I stopped: ${state.consecutive >= 3 ? `${state.consecutive} tool calls in a row were` : `${state.total} tool calls in this session were`} denied. Tell me how you would like to proceed.`,
          };
        }
      } else {
        this.denials.recordAllow(session.id);
      }
      return decision;
    };

    const policy: TurnPolicy = {
      tools,
      canUseTool,
      workspace,
      pathFilter: walkFilter({ ruleSet, scopes, workspace }),
      shouldStop: () => {
        if (!stop) return null;
        const s = stop;
        stop = null;
        this.denials.reset(session.id);
        return s;
      },
    };
    if (this.hooks.PostToolUse?.length || this.hooks.PostToolUseFailure?.length) {
      policy.afterTool = async ({ tool, input, result, ctx: tctx }) => {
        const event = result.is_error ? 'PostToolUseFailure' : 'PostToolUse';
        const r = await runHooks(
          event,
          { ...basePayload, toolName: tool.name, toolInput: input, toolUseId: tctx.toolUseId, toolResult: result.content } as never,
          this.hooks,
          log,
          hookOpts,
        );
        const extra = r.opinions.map((o) => o.additionalContext).filter((c): c is string => !!c);
        return extra.length > 0 ? extra.join('\n') : undefined;
      };
    }
    if (this.hooks.UserPromptSubmit?.length || this.hooks.SessionStart?.length) {
      policy.beforeTurn = async () => {
        const first = (await this.d.storage.sessions.load(session.id)).filter((e) => e.kind === 'user').length <= 1;
        if (first) await runHooks('SessionStart', { ...basePayload } as never, this.hooks, log, hookOpts);
        const r = await runHooks('UserPromptSubmit', { ...basePayload, prompt: message.text } as never, this.hooks, log, hookOpts);
        const deny = r.opinions.find((o) => o.decision === 'deny');
        return deny ? `Your message was not processed: ${deny.reason ?? 'a gateway hook refused it'}.` : undefined;
      };
    }
    if (this.hooks.Stop?.length) {
      policy.afterTurn = async (reason) => {
        await runHooks('Stop', { ...basePayload, reason } as never, this.hooks, log, hookOpts);
      };
    }
    return policy;
  }

  private async ask(
    ctx: TurnPolicyContext,
    tool: AnyTool,
    input: unknown,
    updatedInput: unknown,
    summary: string,
    reason: string,
    source: AskSource,
    tctx: { toolUseId: string; signal: AbortSignal; workspace: string },
    log: Logger,
  ): Promise<Decision> {
    const { session, turn, message } = ctx;
    const { toolUseId, signal, workspace } = tctx;
    const hookOpts = { env: this.hookEnv, defaultTimeoutMs: this.d.cfg.permissions.hookTimeout };
    await this.d.storage.turns.setState(turn.id, 'awaiting_approval');
    try {
      const decision = await this.d.broker.request({
        turnId: turn.id,
        toolUseId,
        sessionId: session.id,
        agentId: session.agentId,
        channelId: `${message.channel}:${message.account}`,
        tool: tool.name,
        alwaysRule: exactRuleFor(tool.name, tool.ruleContent ? tool.ruleContent(input) : undefined, toolMatchKind(tool.name), workspace),
        summary,
        input,
        source,
        requesterPrincipalId: speakerOf(ctx) ?? null,
        conversation: message.conversation,
        signal,
        notify: (a) =>
          ctx.emit({
            type: 'approval_requested',
            approvalId: a.id,
            toolUseId,
            name: tool.name,
            summary: `${a.summary} — ${reason}`,
            expiresAt: a.expiresAt.toISOString(),
            source: a.source,
          }),
        ...(this.hooks.PermissionRequest?.length
          ? {
              autoResponder: async () => {
                const r = await runHooks(
                  'PermissionRequest',
                  { sessionId: session.id, turnId: turn.id, agentId: session.agentId, toolName: tool.name, toolInput: input, toolUseId, reason } as never,
                  this.hooks,
                  log,
                  hookOpts,
                );
                if (r.status === 'failed') return undefined;
                const deny = r.opinions.find((o) => o.decision === 'deny');
                if (deny) return { decision: 'deny' as const, name: 'PermissionRequest', ...(deny.reason ? { reason: deny.reason } : {}) };
                const allow = r.opinions.find((o) => o.decision === 'allow');
                return allow ? { decision: 'allow' as const, name: 'PermissionRequest' } : undefined;
              },
            }
          : {}),
      });
      const approvalId = (await this.d.storage.approvals.list({ sessionId: session.id, limit: 5 })).find((a) => a.toolUseId === toolUseId)?.id ?? '';
      // A stopped turn's approval is cancelled now, before anyone is told it was resolved (the turn's
      // end cancels it too; the claim is atomic, so only one of them records it).
      if (signal.aborted && !suspendedForShutdown(signal)) {
        await this.d.broker
          .cancelTurn(turn.id, 'the turn was stopped')
          .catch((err: unknown) => log.error({ err, turnId: turn.id }, 'could not cancel the approval of a stopped turn'));
      }
      // A turn suspended for shutdown resumes and asks again: its approval is still open, its cards stay live.
      if (!suspendedForShutdown(signal)) ctx.emit({ type: 'approval_resolved', approvalId, toolUseId, allowed: decision.allowed, by: decision.by });
      if (decision.allowed) return updatedInput === undefined ? { behavior: 'allow' } : { behavior: 'allow', updatedInput };
      return {
        behavior: 'deny',
        reason: decision.reason ?? 'the approval was declined',
        kind: decision.by.startsWith('hook:') ? 'hook' : decision.by === 'system' ? 'limit' : 'person',
      };
    } finally {
      if (!signal.aborted) await this.d.storage.turns.setState(turn.id, 'running');
    }
  }
}
