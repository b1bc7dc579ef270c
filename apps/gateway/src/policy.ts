import {
  ApprovalBroker,
  DenialTracker,
  canSetMode,
  decidePermission,
  effectiveMode,
  isPermissionMode,
  preFilter,
  preToolUseFromHooks,
  roleCeiling,
  runHooks,
  scopesOf,
  toDecision,
  type HooksConfig,
  type ModeSetting,
  type PermissionMode,
  type PermissionScope,
  type RuleSet,
  type ScopedRule,
  type Session,
  type Storage,
  type TurnPolicy,
  type TurnPolicyContext,
} from '@switchboard/core';
import { ownValue } from '@switchboard/core';
import type { AnyTool, Decision } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { Config } from './config.js';

export interface PolicyDeps {
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
}

const conversationId = (c: { channel: string; account: string; id: string }) => `${c.channel}:${c.account}:${c.id}`;

/**
 * The action layer (DESIGN.md §1, layer 2): for each turn, the tools the model may see, the
 * deny-first decision for every tool_use, approvals for asks, hooks, and denial tracking.
 */
export class PolicyService {
  private rulesCache: RuleSet | null = null;
  private readonly denials: DenialTracker;
  private readonly hooks: HooksConfig;
  private readonly hookEnv: Record<string, string>;

  constructor(private readonly d: PolicyDeps) {
    this.denials = new DenialTracker(d.cfg.permissions.denialLimits);
    this.hooks = d.cfg.hooks as HooksConfig;
    // Hooks get a minimal environment: never the gateway's secrets.
    this.hookEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  }

  /** Forgets cached database rules (after a rule was created or deleted). */
  invalidateRules(): void {
    this.rulesCache = null;
  }

  /** Every rule in force: config (gateway and agent scopes) and database. */
  async ruleSet(): Promise<RuleSet> {
    if (this.rulesCache) return this.rulesCache;
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
      const scope: PermissionScope = r.scopeId === null ? { kind: r.scopeKind } : { kind: r.scopeKind, id: r.scopeId };
      for (const rule of expand(r.rule)) out.push({ scope, behavior: r.behavior, rule, source: r.createdBy.startsWith('operator:') ? 'database' : 'approval', id: r.id });
    }
    this.rulesCache = out;
    return out;
  }

  /** The mode in force for a session and role. */
  modeFor(session: Session, role: string, channelId: string): PermissionMode {
    const settings: ModeSetting[] = [];
    if (this.d.cfg.permissions.mode) settings.push({ scope: { kind: 'gateway' }, mode: this.d.cfg.permissions.mode });
    const agentMode = ownValue(this.d.cfg.agents, session.agentId)?.mode;
    if (agentMode) settings.push({ scope: { kind: 'agent', id: session.agentId }, mode: agentMode });
    if (session.settings.mode && isPermissionMode(session.settings.mode)) {
      settings.push({ scope: { kind: 'session', id: session.id }, mode: session.settings.mode });
    }
    void channelId;
    return effectiveMode(settings, roleCeiling(role));
  }

  /** Whether a person may set their own session to `mode`. */
  checkModeChange(session: Session, role: string, mode: string): { ok: true; mode: PermissionMode } | { ok: false; reason: string } {
    if (!isPermissionMode(mode)) return { ok: false, reason: `unknown mode "${mode}": use plan, dontAsk, default, acceptEdits or bypassPermissions` };
    const broader = this.modeFor({ ...session, settings: { ...session.settings, mode: undefined } } as Session, role, '');
    const check = canSetMode(role, mode, broader);
    return check.ok ? { ok: true, mode } : check;
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
    const principalId = message.principalId ?? session.principalId ?? undefined;
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
    const ruleSet = await this.ruleSet();
    const mode = this.modeFor(session, role, channelId);
    const tools = preFilter(agent.tools, ruleSet, scopes);
    const log = this.d.log.child({ sessionId: session.id, turnId: turn.id });
    const hookOpts = { env: this.hookEnv, defaultTimeoutMs: this.d.cfg.permissions.hookTimeout };
    const preToolUse = this.hooks.PreToolUse?.length ? preToolUseFromHooks(this.hooks, log, hookOpts) : undefined;
    let stop: { reason: 'denial_limit'; error: string } | null = null;
    this.denials.startTurn(session.id);
    const audit = (action: string, detail: Record<string, unknown>) =>
      this.d.storage.audit.append({ actor: 'gateway', action, target: turn.id, detail }).catch((err: unknown) => log.error({ err }, 'audit write failed'));
    const basePayload = { sessionId: session.id, turnId: turn.id, agentId: session.agentId };

    const canUseTool = async (tool: AnyTool, input: unknown, tctx: Parameters<TurnPolicy['canUseTool']>[2]): Promise<Decision> => {
      const result = await decidePermission(
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
        decision = await this.ask(ctx, tool, result.input, result.updatedInput, summary, result.reason, tctx.toolUseId, tctx.signal, log);
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
        void runHooks('PermissionDenied', { ...basePayload, toolName: tool.name, toolInput: input, toolUseId: tctx.toolUseId, reason: decision.reason } as never, this.hooks, log, hookOpts);
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
        const r = await runHooks(event, { ...basePayload, toolName: tool.name, toolInput: input, toolUseId: tctx.toolUseId, toolResult: result.content } as never, this.hooks, log, hookOpts);
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
    toolUseId: string,
    signal: AbortSignal,
    log: Logger,
  ): Promise<Decision> {
    const { session, turn, message } = ctx;
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
        ruleContent: tool.ruleContent ? tool.ruleContent(input) : undefined,
        summary,
        input,
        requesterPrincipalId: message.principalId ?? session.principalId,
        conversation: message.conversation,
        signal,
        notify: (a) => ctx.emit({ type: 'approval_requested', approvalId: a.id, toolUseId, name: tool.name, summary: `${a.summary} — ${reason}`, expiresAt: a.expiresAt.toISOString() }),
        ...(this.hooks.PermissionRequest?.length
          ? {
              autoResponder: async () => {
                const r = await runHooks('PermissionRequest', { sessionId: session.id, turnId: turn.id, agentId: session.agentId, toolName: tool.name, toolInput: input, toolUseId, reason } as never, this.hooks, log, hookOpts);
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
      ctx.emit({ type: 'approval_resolved', approvalId, toolUseId, allowed: decision.allowed, by: decision.by });
      if (decision.allowed) return updatedInput === undefined ? { behavior: 'allow' } : { behavior: 'allow', updatedInput };
      return { behavior: 'deny', reason: decision.reason ?? 'the approval was declined', kind: decision.by.startsWith('hook:') ? 'hook' : decision.by === 'system' ? 'limit' : 'person' };
    } finally {
      if (!signal.aborted) await this.d.storage.turns.setState(turn.id, 'running');
    }
  }
}
