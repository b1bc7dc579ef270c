import { UnconfiguredModelClient, type AnyTool, type Decision, type ToolContext } from '@switchboard/agent';
import type { Logger } from 'pino';
import { offerScopeOf, type OfferContext, type OfferScope } from '../capability-offers.js';
import { compactionHooks } from '../context/compaction-hooks.js';
import type { CompactionHooks } from '../context/compaction-run.js';
import type { HookTurnFields } from '../permissions/hooks.js';
import type { BoundaryPolicy, RoomPolicy } from '../boundary/policy.js';
import type { ConversationRef } from '../channel.js';
import type { TurnPolicy, TurnPolicyContext } from '../engine.js';
import { ownValue } from '../own.js';
import { DenialTracker } from '../permissions/denials.js';
import { toolMatchKind } from '../permissions/matchers.js';
import { canSetMode, isPermissionMode, lowerMode, MODE_ORDER, type PermissionMode } from '../permissions/modes.js';
import { decidePermission, toDecision, type PipelineResult } from '../permissions/pipeline.js';
import { preFilter } from '../permissions/pre-filter.js';
import { describeLimit, resolveMode, type ModeResolution, type ScopeModes } from '../permissions/scope-modes.js';
import { scopesOf, type PermissionScope, type RuleSet, type ScopedRule } from '../permissions/scopes.js';
import { SKILL_TOOL, SkillRun } from '../skills/skill-run.js';
import { skillDenied } from '../skills/switches.js';
import { walkFilter } from '../permissions/walk-filter.js';
import type { Session, StoredRule } from '../storage.js';
import { askForApproval } from './ask.js';
import { TurnAutoMode } from './auto-mode.js';
import { autoHandbackOf, autoModeStatus, type AutoModeStatus } from './auto-mode-status.js';
import { HookBridge, permissionRequestResponder, turnHookCallbacks } from './hook-bridge.js';
import { EXIT_PLAN_MODE, PlanExit } from './plan-exit.js';
import { principalMode } from './principal-modes.js';
import { roomDenyRules, settingsRules, storedRules } from './rule-set.js';
import { SessionGrants } from './session-grants.js';
import type { PolicyServiceOptions } from './settings.js';

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

const conversationIdOf = (conversation: { channel: string; account: string; id: string }) =>
  `${conversation.channel}:${conversation.account}:${conversation.id}`;

/** A session's own mode setting as a scope entry (none when unset or not a mode). */
const sessionModeOf = (session: Session): { id: string; mode: PermissionMode } | undefined =>
  isPermissionMode(session.settings.mode) ? { id: session.id, mode: session.settings.mode } : undefined;

/** The principal whose message a turn answers: the message's own; a DM session's owner only for a DM. */
const speakerOf = (ctx: Pick<TurnPolicyContext, 'message' | 'session'>): string | undefined =>
  ctx.message.principalId ?? (ctx.message.kind === 'dm' && ctx.session.scope === 'dm' ? (ctx.session.principalId ?? undefined) : undefined);

/** What people see of a call a subagent makes: the subagent and its task first (`🤖 <type>: <description>`). */
const subagentSummary = (subagent: string | undefined, summary: string): string => (subagent ? `🤖 ${subagent} — ${summary}` : summary);

/** Who makes a call: the turn itself (its mode), or one of its subagents (a mode at most the turn's, and its label). */
interface Caller {
  mode: PermissionMode;
  subagent?: string;
}

/** Tools that work in a workspace: the file tools, and `exec` (its working directory). A sender without one gets none of them. */
const isFileTool = (tool: { name: string }) => toolMatchKind(tool.name) === 'path' || toolMatchKind(tool.name) === 'command';

/**
 * The action layer (DESIGN.md §1, layer 2): for each turn, the tools the model may see, the
 * deny-first decision for every tool_use, approvals for asks, hooks, and denial tracking. Built
 * from resolved values ({@link PolicyServiceOptions}); the rules, modes and ceilings it reads
 * from `settings.current` follow reloads (call {@link invalidateRules} after one).
 */
export class PolicyService {
  private rulesCache: RuleSet | null = null;
  /** The operators' offer-switches, cached like the rules (dropped by {@link invalidateRules}). */
  private offersCache: readonly OfferScope[] | null = null;
  /** Bumped by {@link invalidateRules}: a read that started before a change is not cached. */
  private offersGeneration = 0;
  /** When the earliest session rule in the cache lapses (the cache is rebuilt then). */
  private rulesLiveUntil = Infinity;
  /** Session grants: their expiry, audit and notices. */
  readonly grants: SessionGrants;
  private readonly denials: DenialTracker;
  private readonly hooks: HookBridge;

  constructor(private readonly options: PolicyServiceOptions) {
    this.denials = new DenialTracker(options.denialLimits);
    this.hooks = new HookBridge(options.hooks);
    this.grants = new SessionGrants({
      storage: options.storage,
      log: options.log,
      ttlMs: options.sessionGrantTtlMs,
      onRulesChanged: () => this.invalidateRules(),
      ...(options.notify ? { notify: options.notify } : {}),
    });
  }

  /** The PreCompact / PostCompact hooks of one compaction (see `compactionHooks`). */
  compactionHooks(fields: HookTurnFields, log: Logger): CompactionHooks {
    return compactionHooks(this.hooks, fields, log);
  }

  /** After a rule was stored (control API or "always allow"): reloads rules and audits a session grant. */
  async ruleSaved(rule: StoredRule): Promise<void> {
    this.invalidateRules();
    await this.grants.ruleSaved(rule);
  }

  /** After a session's mode was set (chat `/mode` or the control API): a mode above the broader scopes' is a session grant. */
  async sessionModeSet(context: ModeContext, mode: PermissionMode, actor: string): Promise<void> {
    await this.grants.modeSet(context.session, mode, (await this.resolveMode(context, false)).mode, actor);
    // Setting a mode (`/mode auto` again) ends an auto-mode hand-back: the classifier answers again, its denial counts start over.
    if (autoHandbackOf(context.session.settings) || mode === 'auto') {
      await this.options.storage.sessions.updateSettings(context.session.id, { autoHandback: null });
      this.denials.reset(context.session.id);
    }
  }

  /** Where the session stands in auto mode (undefined unless its mode in force is `auto`), for `/status` and `/context`. */
  async autoStatus(context: ModeContext): Promise<AutoModeStatus | undefined> {
    return autoModeStatus(context.session, await this.modeFor(context));
  }

  /** Where a stored session stands, for mode resolution outside a turn (its own principal; guest without one). */
  async sessionContext(session: Session): Promise<ModeContext> {
    const principal = session.principalId ? await this.options.storage.principals.get(session.principalId) : null;
    return {
      session,
      role: principal?.role ?? 'guest',
      principalId: session.principalId ?? undefined,
      channelId: `${session.channel}:${session.account}`,
      conversation: { channel: session.channel, account: session.account, id: session.conversation ?? '', kind: session.scope },
    };
  }

  /** Forgets cached rules (after a rule was created or deleted, or the settings were replaced); other replicas are told. */
  invalidateRules(): void {
    this.dropCachedRules();
    this.options.onRulesChanged?.();
  }

  /** Forgets cached rules without telling anyone (another replica changed them). */
  dropCachedRules(): void {
    this.rulesCache = null;
    this.offersCache = null;
    this.offersGeneration++;
  }

  /** Who is offered what for a speaker of `role`; undefined without `offeredTo` (every tool is offered). */
  private async offers(role: string): Promise<OfferContext | undefined> {
    const offeredTo = this.options.offeredTo;
    if (!offeredTo) return undefined;
    let switches = this.offersCache;
    if (!switches) {
      const generation = this.offersGeneration;
      switches = (await this.options.storage.offerSwitches.list()).map(offerScopeOf);
      if (generation === this.offersGeneration) this.offersCache = switches;
    }
    return { role, offeredTo: (tool) => offeredTo(tool), switches };
  }

  /** Every rule in force: settings (gateway and agent scopes) and database. */
  async ruleSet(): Promise<RuleSet> {
    if (this.rulesCache && Date.now() < this.rulesLiveUntil) return this.rulesCache;
    let liveUntil = Infinity;
    const out = settingsRules(this.options.settings.current, this.expand);
    for (const stored of await this.options.storage.rules.list()) {
      // A session rule past its TTL grants nothing, even before the sweep deletes it.
      if (!this.grants.isLive(stored)) continue;
      if (stored.scopeKind === 'session') liveUntil = Math.min(liveUntil, this.grants.expiresAt(stored.createdAt));
      out.push(...storedRules(stored, this.expand));
    }
    this.rulesCache = out;
    this.rulesLiveUntil = liveUntil;
    return out;
  }

  private readonly expand = (rule: string): string[] => this.options.expandRule?.(rule) ?? [rule];

  /** The room settings of a conversation (own-property lookup: room ids come from outside). */
  private room(policy: BoundaryPolicy | null | undefined, conversation: ModeContext['conversation']): RoomPolicy | undefined {
    if (conversation.kind !== 'room' || !policy) return undefined;
    return ownValue(policy.groups, conversation.id);
  }

  /**
   * The mode in force for one speaker in one conversation: the least trusted of the role's
   * ceiling (`roleCeilings`) and the mode of every scope — gateway, agent, channel account
   * (`permissionMode`, operator overrides included), room (`groups.<id>.mode`), principal
   * (control API) and, unless `withSession` is false, session.
   */
  async resolveMode(context: ModeContext, withSession = true): Promise<ModeResolution> {
    const { modes } = await this.scopeModes(context);
    return resolveMode(withSession ? modes : { ...modes, session: undefined }, context.role, this.options.settings.current.roleCeilings);
  }

  /** Every scope's mode setting for `context` (read once; the session's from `context.session`), and the room's settings. */
  private async scopeModes(context: ModeContext): Promise<{ modes: ScopeModes; room: RoomPolicy | undefined }> {
    const settings = this.options.settings.current;
    const policy = await this.options.boundaryPolicy?.(context.channelId);
    const room = this.room(policy, context.conversation);
    const modes: ScopeModes = {
      gateway: settings.mode,
      agent: { id: context.session.agentId, mode: settings.agents.get(context.session.agentId)?.mode },
      channel: { id: context.channelId, mode: policy?.permissionMode ?? undefined },
      conversation: { id: conversationIdOf(context.conversation), mode: room?.mode },
      ...(context.principalId ? { principal: { id: context.principalId, mode: await principalMode(this.options.storage, context.principalId) } } : {}),
      session: sessionModeOf(context.session),
    };
    return { modes, room };
  }

  /** The mode in force (see {@link resolveMode}). */
  async modeFor(context: ModeContext): Promise<PermissionMode> {
    return (await this.resolveMode(context)).mode;
  }

  /** Whether a person may set their own session to `mode`: at most their role's ceiling and what the broader scopes give. */
  async checkModeChange(context: ModeContext, mode: string): Promise<{ ok: true; mode: PermissionMode } | { ok: false; reason: string }> {
    if (!isPermissionMode(mode)) return { ok: false, reason: `unknown mode "${mode}": use ${MODE_ORDER.join(', ')}` };
    const broader = await this.resolveMode(context, false);
    const check = canSetMode(context.role, mode, broader.mode, this.options.settings.current.roleCeilings, describeLimit(broader, context.role));
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
    return this.options.scrub(`${tool.name} ${body}`);
  }

  /**
   * The skills of one turn: the agent's skills that no deny rule switches off at the turn's
   * scopes (`skill(<name>)`, see `skillDenied`), when the `skill` tool is offered at all;
   * undefined when none is left.
   */
  private async skillRun(
    offered: readonly AnyTool[],
    agentId: string,
    workspace: string | undefined,
    ruleSet: RuleSet,
    scopes: readonly PermissionScope[],
    log: Logger,
  ): Promise<SkillRun | undefined> {
    const source = this.options.skills;
    if (!source || !offered.some((tool) => tool.name === SKILL_TOOL)) return undefined;
    const enabled = (await source.forTurn(agentId, workspace, log)).filter((skill) => !skillDenied(skill.name, ruleSet, scopes));
    return enabled.length > 0 ? new SkillRun(enabled, { groupMembers: (group) => source.groupMembers(group) }) : undefined;
  }

  /** The auto mode of one turn (the classifier; its settings as they are now). */
  private autoMode(ctx: TurnPolicyContext, session: Session, speaker: string | undefined, log: Logger): TurnAutoMode {
    const { storage, model, scrub, notify } = this.options;
    return new TurnAutoMode(
      {
        storage,
        model: model ?? new UnconfiguredModelClient(),
        settings: this.options.settings.current.auto,
        log,
        scrub,
        ...(notify ? { notify } : {}),
        ruleSaved: (rule) => this.ruleSaved(rule),
      },
      ctx,
      session,
      speaker,
    );
  }

  /** Builds the policy of one turn. */
  async forTurn(ctx: TurnPolicyContext): Promise<TurnPolicy> {
    const { session, turn, message, agent } = ctx;
    const { storage } = this.options;
    // The turn acts with the authority of the person whose message it answers: the message's
    // principal, never the session's (in a room, the session belongs to no one in particular).
    const principalId = speakerOf(ctx);
    const principal = principalId ? await storage.principals.get(principalId) : null;
    const role = principal?.role ?? 'guest';
    const channelId = `${message.channel}:${message.account}`;
    const conversationId = conversationIdOf(message.conversation);
    const scopes = scopesOf({
      agent: session.agentId,
      channel: channelId,
      conversation: conversationId,
      role,
      ...(principalId ? { principal: principalId } : {}),
      session: session.id,
    });
    // Every scope is read once: the broader mode (without the session's) decides whether a session
    // grant lapses (and tells the person about lapsed grants), then the mode in force takes the
    // session's setting as it now is.
    const { modes, room } = await this.scopeModes({ session, role, principalId, channelId, conversation: message.conversation });
    const ruleSet: ScopedRule[] = [...(await this.ruleSet()), ...(room ? roomDenyRules(room, conversationId, this.expand) : [])];
    const ceilings = this.options.settings.current.roleCeilings;
    const broader = resolveMode({ ...modes, session: undefined }, role, ceilings).mode;
    const live = await this.grants.atTurnStart(session, broader, message.conversation);
    // `let`: an approved plan (exit_plan_mode) changes the mode for the rest of the turn.
    let mode = resolveMode({ ...modes, session: sessionModeOf(live) }, role, ceilings).mode;
    // A room works in the room's directory; a person's DMs in that person's. A room sender the
    // gateway knows no principal for gets no file tools at all.
    const fileless = !principalId;
    const workspace = fileless
      ? this.options.workspaces.none(session.agentId)
      : await this.options.workspaces.ensure(
          session.agentId,
          message.kind === 'room'
            ? { kind: 'room', channel: message.channel, account: message.account, conversation: message.conversation.id }
            : { kind: 'person', principalId },
        );
    const offers = await this.offers(role);
    const offered = preFilter(agent.tools, ruleSet, scopes, offers ? { offers } : {}).filter((tool) => !(fileless && isFileTool(tool)));
    const log = this.options.log.child({ sessionId: session.id, turnId: turn.id });
    const skills = await this.skillRun(offered, session.agentId, fileless ? undefined : workspace, ruleSet, scopes, log);
    const preToolUse = this.hooks.preToolUse(log);
    const turnFields = { sessionId: session.id, turnId: turn.id, agentId: session.agentId };
    const safety = {
      ...(this.options.protectedFiles.configFile ? { configFile: this.options.protectedFiles.configFile } : {}),
      ...(this.options.protectedFiles.databaseFile ? { databaseFile: this.options.protectedFiles.databaseFile } : {}),
    };
    const modeContext: ModeContext = { session, role, principalId, channelId, conversation: message.conversation };
    // Plan mode set for this session only (the broader scopes allow more): the model may present its plan for approval.
    const planExit =
      mode === 'plan' && broader !== 'plan' && principalId
        ? new PlanExit({
            storage,
            broker: this.options.broker,
            log,
            ctx,
            requesterPrincipalId: principalId,
            broaderMode: async () => (await this.resolveMode(modeContext, false)).mode,
            currentMode: () => mode,
            refusal: async (tool, input, toolCtx) => {
              // Deny-first: a deny rule or a PreToolUse hook's deny refuses; nothing here can approve the plan.
              const r = await decidePermission(
                { tool, input, ctx: toolCtx },
                { ruleSet, scopes, mode: 'default', ...(preToolUse ? { preToolUse } : {}), safety },
              );
              return r.behavior === 'deny' ? r.reason : undefined;
            },
            switchTo: async (target, approval) => {
              const actor = approval.decidedBy ?? 'system';
              await storage.sessions.updateSettings(session.id, { mode: target });
              await storage.audit.append({ actor, action: 'session.mode', target: session.id, detail: { mode: target, via: 'plan', approvalId: approval.id } });
              const stored = (await storage.sessions.get(session.id)) ?? session;
              await this.sessionModeSet({ ...modeContext, session: stored }, target, actor);
              mode = target;
            },
            scrub: (text) => this.options.scrub(text),
            responder: (input, toolUseId) =>
              permissionRequestResponder(
                this.hooks,
                { ...turnFields, toolName: EXIT_PLAN_MODE, toolInput: input, toolUseId, reason: 'approving leaves plan mode' },
                log,
              ),
          })
        : undefined;
    const tools = [
      // Without a skill to load, the skill tool is not offered.
      ...(skills ? offered : offered.filter((tool) => tool.name !== SKILL_TOOL)),
      // Not a registry capability: offered with session-scope plan mode alone, hidden only by a deny rule.
      ...(planExit ? preFilter([planExit.tool], ruleSet, scopes) : []),
    ];
    let stop: { reason: 'denial_limit'; error: string } | null = null;
    this.denials.startTurn(session.id);
    const auto = mode === 'auto' ? this.autoMode(ctx, live, principalId, log) : undefined;
    const audit = (action: string, detail: Record<string, unknown>) =>
      storage.audit.append({ actor: 'gateway', action, target: turn.id, detail }).catch((err: unknown) => log.error({ err }, 'audit write failed'));

    // One decision function for the turn and each of its subagents (`caller`): the same rules,
    // scopes and approvers; a subagent's mode is at most the turn's and its asks name it.
    const canUseTool = async (tool: AnyTool, input: unknown, toolCtx: ToolContext, caller: Caller = { mode }): Promise<Decision> => {
      // The run's own skills (a subagent holds its own): a loaded skill's allowed-tools only narrow.
      const permit = toolCtx.skills?.permits(tool.name) ?? { ok: true };
      if (permit.ok && planExit && tool === planExit.tool) {
        const decision = await planExit.check(input, toolCtx);
        await audit('permission.decision', {
          tool: tool.name,
          behavior: decision.behavior,
          decidedBy: decision.behavior === 'deny' ? decision.kind : 'approval',
          ...(decision.behavior === 'deny' ? { reason: decision.reason } : {}),
          mode: 'plan',
        });
        return decision;
      }
      // Auto mode (the call's own mode: a subagent's may be lower): a call likely to need the
      // classifier starts it while the PreToolUse hooks run.
      const classifier = caller.mode === 'auto' ? auto : undefined;
      const early =
        permit.ok && classifier && !(fileless && isFileTool(tool)) && classifier.worthStartingEarly(tool, preToolUse !== undefined)
          ? classifier.start(tool, input, toolCtx.signal, toolCtx.toolUseId)
          : undefined;
      const result: PipelineResult = !permit.ok
        ? { behavior: 'deny', source: 'rule', reason: permit.reason }
        : fileless && isFileTool(tool)
          ? { behavior: 'deny', source: 'rule', reason: NO_FILE_TOOLS }
          : await decidePermission({ tool, input, ctx: toolCtx }, { ruleSet, scopes, mode: caller.mode, ...(preToolUse ? { preToolUse } : {}), safety });
      const summary = subagentSummary(caller.subagent, this.summarize(tool, result.behavior === 'deny' ? input : result.input));
      // The classifier answers only the mode's own ask (auto.answers → mayAnswerAutomatically);
      // its answer is used only here, where the pipeline reached that ask.
      const classified =
        result.behavior === 'ask' && classifier?.answers(result.source)
          ? await classifier.decide(tool, result.input, result.updatedInput, toolCtx, early)
          : await early?.cancel().then(() => undefined);
      const decision =
        classified?.decision ??
        (result.behavior === 'ask'
          ? await askForApproval(
              { storage, broker: this.options.broker, hooks: this.hooks, log },
              ctx,
              {
                tool,
                input: result.input,
                updatedInput: result.updatedInput,
                summary,
                reason: result.reason,
                source: result.source,
                toolUseId: toolCtx.toolUseId,
                signal: toolCtx.signal,
                workspace: toolCtx.workspace,
              },
              principalId ?? null,
            )
          : toDecision(result));
      await audit('permission.decision', {
        tool: tool.name,
        summary,
        behavior: decision.behavior,
        decidedBy: classified?.decision ? 'classifier' : result.behavior === 'ask' ? 'approval' : result.source,
        reason: decision.behavior === 'deny' ? decision.reason : result.reason,
        rule: result.rule?.rule,
        mode: caller.mode,
        ...(caller.subagent ? { subagent: caller.subagent } : {}),
      });
      if (decision.behavior === 'allow') {
        this.denials.recordAllow(session.id);
        return decision;
      }
      void this.hooks.run(
        'PermissionDenied',
        { ...turnFields, toolName: tool.name, toolInput: input, toolUseId: toolCtx.toolUseId, reason: decision.reason },
        log,
      );
      const state = this.denials.recordDenial(session.id);
      if (state.signal === 'denial_limit') {
        const what = state.limit === 'consecutive' ? `${state.consecutive} tool calls in a row were` : `${state.total} tool calls in this session were`;
        if (auto && !auto.handedBack) {
          // In auto mode the limit hands the mode's asks back to people; the turn goes on.
          await auto.handBack(`${what} denied`);
          this.denials.reset(session.id);
        } else {
          stop = { reason: 'denial_limit', error: `I stopped: ${what} denied. Tell me how you would like to proceed.` };
        }
      }
      return decision;
    };

    return {
      tools,
      canUseTool: (tool, input, toolCtx) => canUseTool(tool, input, toolCtx),
      mode,
      forSubagent: ({ label, mode: wanted }) => {
        // The label holds the model's own words: scrubbed like every summary people and the audit see.
        const caller: Caller = { mode: wanted ? lowerMode(mode, wanted) : mode, subagent: this.options.scrub(label) };
        return { canUseTool: (tool, input, toolCtx) => canUseTool(tool, input, toolCtx, caller), mode: caller.mode };
      },
      ...(skills ? { skills } : {}),
      workspace,
      pathFilter: walkFilter({ ruleSet, scopes, workspace }),
      ...(principalId ? { principalId } : {}),
      roomSession: session.scope === 'room' || message.kind === 'room',
      shouldStop: () => {
        if (!stop) return null;
        const due = stop;
        stop = null;
        this.denials.reset(session.id);
        return due;
      },
      ...turnHookCallbacks({ bridge: this.hooks, storage, log, turn: turnFields, prompt: message.text }),
    };
  }
}
