import type { AnyTool, AskSource, Decision, ModelClient, Usage } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { ConversationRef } from '../channel.js';
import type { TurnPolicyContext } from '../engine.js';
import { mayAnswerAutomatically } from '../permissions/ask-source.js';
import { classify, type AutoClassifierSettings, type ClassifierOutcome, type ClassifierStageRecord } from '../permissions/auto-classifier.js';
import { generalisablePart } from '../permissions/always-rules.js';
import { exactRuleFor } from '../permissions/exact-rule.js';
import { toolMatchKind } from '../permissions/matchers.js';
import type { Session, Storage, StoredRule } from '../storage.js';
import { autoHandbackOf } from './auto-mode-status.js';

/** Person messages the classifier is shown at most (newest kept). */
const MAX_PERSON_MESSAGES = 20;

/** What the auto mode of a turn works with. */
export interface AutoModeDeps {
  storage: Storage;
  model: ModelClient;
  settings: AutoClassifierSettings;
  log: Logger;
  /** Removes secrets from what the classifier is shown. */
  scrub(text: string): string;
  /** Tells the conversation something from the gateway (the hand-back notice). Must not throw. */
  notify?(to: ConversationRef, text: string): Promise<void>;
  /** After a classifier allow was stored as a session rule (rule caches reload; the grant is audited and lapses). */
  ruleSaved(rule: StoredRule): Promise<void>;
}

/** A classification started before the pipeline reached the ask (in parallel with PreToolUse hooks). */
export interface EarlyClassification {
  /** The input it classifies (an input rewritten by a hook makes it useless). */
  input: unknown;
  result: Promise<ClassifierRun>;
  /** Cancels it (the pipeline did not reach the classifier's step) and audits what ran as unused. Never rejects. */
  cancel(): Promise<void>;
}

/** One classification: its outcome and the stages that ran (audited once it is known whether the verdict was used). */
interface ClassifierRun {
  outcome: ClassifierOutcome;
  stages: ClassifierStageRecord[];
}

/** What the classifier decided for one call: a decision, or undefined — a person must be asked. */
export type AutoAnswer = { decision: Decision; outcome: ClassifierOutcome } | { decision: undefined; outcome: ClassifierOutcome };

/**
 * The auto mode of one turn: runs the classifier for the mode's asks, audits each stage
 * (`permission.classifier`: stage, verdict, reason, model, latency, tokens) and records its usage
 * as the turn's (so it counts toward budgets), and hands the session back to people after
 * repeated blocks. The classifier answers only asks whose source `mayAnswerAutomatically`
 * accepts (`mode`), and never once the session was handed back.
 */
export class TurnAutoMode {
  private handback: { at: number; reason: string } | undefined;
  private messages: Promise<string[]> | undefined;

  constructor(
    private readonly deps: AutoModeDeps,
    private readonly ctx: TurnPolicyContext,
    session: Session,
    /** The principal whose message the turn answers. */
    private readonly speaker: string | undefined,
  ) {
    this.handback = autoHandbackOf(session.settings);
  }

  /** Whether the session was handed back to people (mode asks go to people). */
  get handedBack(): boolean {
    return this.handback !== undefined;
  }

  /** Whether the classifier may answer an ask from `source` now: only the mode's own ask, and only before a hand-back. */
  answers(source: AskSource): boolean {
    return !this.handedBack && mayAnswerAutomatically(source);
  }

  /**
   * Whether to start classifying before the PreToolUse hooks have answered: only when there are
   * hooks to wait for and the call will likely reach the mode's ask (not read-only, not a file
   * edit, which `auto` lets through like `acceptEdits`, and not concurrency-safe: such a tool —
   * `task` among them — classifies its own calls as reads and is let through before the ask).
   */
  worthStartingEarly(tool: AnyTool, hooks: boolean): boolean {
    return hooks && !this.handedBack && !tool.readOnly && !tool.concurrencySafe && toolMatchKind(tool.name) !== 'path';
  }

  /** Starts classifying `input` now; linked to `signal` (an abort cancels the model call). */
  start(tool: AnyTool, input: unknown, signal: AbortSignal, toolUseId: string): EarlyClassification {
    const controller = new AbortController();
    const linked = AbortSignal.any([signal, controller.signal]);
    const result = this.run(tool, input, linked);
    return {
      input,
      result,
      cancel: async () => {
        controller.abort();
        await this.audit(tool, toolUseId, (await result).stages, { early: true, used: false });
      },
    };
  }

  /**
   * Decides one ask: uses `early` when it classified the same input, else classifies now. An
   * allow lets the call run (with `updatedInput` when the pipeline rewrote it) and is a session
   * grant (see {@link grant}); a block denies it with the reason and guidance; unavailable leaves
   * it to a person.
   */
  async decide(
    tool: AnyTool,
    input: unknown,
    updatedInput: unknown,
    call: { signal: AbortSignal; toolUseId: string; workspace: string },
    early?: EarlyClassification,
  ): Promise<AutoAnswer> {
    const { signal, toolUseId, workspace } = call;
    let run: ClassifierRun;
    if (early && early.input === input) {
      run = await early.result;
      await this.audit(tool, toolUseId, run.stages, { early: true, used: true });
    } else {
      await early?.cancel();
      run = await this.run(tool, input, signal);
      await this.audit(tool, toolUseId, run.stages, { early: false, used: true });
    }
    const { outcome } = run;
    if (outcome.verdict === 'allow') {
      await this.grant(tool, input, workspace);
      return { decision: updatedInput === undefined ? { behavior: 'allow' } : { behavior: 'allow', updatedInput }, outcome };
    }
    if (outcome.verdict === 'block') {
      const reason =
        `auto mode's classifier blocked ${tool.name}: ${outcome.reason}. ` +
        'Do not retry the same call; take a different approach that stays within what the person asked, or tell the person what you need so they can do it or approve it themselves';
      return { decision: { behavior: 'deny', reason, kind: 'mode' }, outcome };
    }
    return { decision: undefined, outcome };
  }

  /**
   * Stores a classifier allow as a session grant: allow rules at session scope that match exactly
   * this call (one per part of an `exec` line), audited as `grant.created` and lapsing after
   * `permissions.sessionGrantTtl` like every session rule. A call no exact rule can describe (a
   * tool without rule content, a part that depends on what runs before it) grants nothing: the
   * next such call is classified again. Never throws.
   */
  private async grant(tool: AnyTool, input: unknown, workspace: string): Promise<void> {
    const { session } = this.ctx;
    try {
      const kind = toolMatchKind(tool.name);
      let rules: string[];
      if (tool.ruleContents) {
        const parts = tool.ruleContents(input);
        rules = parts.length > 0 && parts.every(generalisablePart) ? [...new Set(parts.map((p) => exactRuleFor(tool.name, p, kind, workspace)))] : [];
      } else {
        const content = tool.ruleContent?.(input);
        rules = content === undefined ? [] : [exactRuleFor(tool.name, content, kind, workspace)];
      }
      for (const rule of rules) {
        const saved = await this.deps.storage.rules.create({ scopeKind: 'session', scopeId: session.id, behavior: 'allow', rule, createdBy: 'classifier' });
        await this.deps.ruleSaved(saved);
      }
    } catch (err) {
      this.deps.log.error({ err, sessionId: session.id }, 'could not store the classifier’s allow as a session grant');
    }
  }

  /**
   * Hands the session back to people: stored in its settings (so every later turn asks people
   * too, until the person sets `auto` again), audited, and told in the chat once. Never throws.
   */
  async handBack(reason: string): Promise<void> {
    if (this.handback) return;
    const { session, turn, message } = this.ctx;
    this.handback = { at: Date.now(), reason };
    try {
      await this.deps.storage.sessions.updateSettings(session.id, { autoHandback: this.handback });
      await this.deps.storage.audit.append({ actor: 'gateway', action: 'auto.handed_back', target: session.id, detail: { turnId: turn.id, reason } });
      await this.deps.notify?.(
        message.conversation,
        `Auto mode handed back to you: ${reason}. From now on I ask you before such calls in this session; send /mode auto to let the classifier decide again.`,
      );
    } catch (err) {
      this.deps.log.error({ err, sessionId: session.id }, 'could not record the auto-mode hand-back');
    }
  }

  /** Runs the classifier; each stage's usage is recorded as the turn's as it ends (spent tokens count whether or not the verdict is used). */
  private async run(tool: AnyTool, input: unknown, signal: AbortSignal): Promise<ClassifierRun> {
    const messages = await this.personMessages();
    let scrubbed: unknown;
    try {
      scrubbed = JSON.parse(this.deps.scrub(JSON.stringify(input) ?? 'null'));
    } catch {
      scrubbed = '(input not serializable)';
    }
    const stages: ClassifierStageRecord[] = [];
    const onStage = (r: ClassifierStageRecord) => {
      stages.push(r);
      if (r.usage) this.ctx.recordCall?.(r.usage, r.model);
      this.deps.log.info(
        { tool: tool.name, stage: r.stage, verdict: r.verdict, failure: r.failure, latencyMs: r.latencyMs },
        `auto-mode classifier: ${r.verdict}`,
      );
    };
    const outcome = await classify(
      { model: this.deps.model, settings: this.deps.settings, onStage },
      { tool: tool.name, description: tool.description, input: scrubbed },
      messages,
      signal,
    );
    return { outcome, stages };
  }

  /**
   * Audits each stage (`permission.classifier`: stage, verdict, reason, model, latency, tokens;
   * `early` when it started beside the PreToolUse hooks, `used: false` when the pipeline never
   * reached the classifier's step). Never rejects.
   */
  private async audit(tool: AnyTool, toolUseId: string, stages: readonly ClassifierStageRecord[], how: { early: boolean; used: boolean }): Promise<void> {
    const { turn, session } = this.ctx;
    for (const r of stages) {
      const tokens = r.usage ? tokensOf(r.usage) : undefined;
      await this.deps.storage.audit
        .append({
          actor: 'gateway',
          action: 'permission.classifier',
          target: turn.id,
          detail: {
            sessionId: session.id,
            toolUseId,
            tool: tool.name,
            stage: r.stage,
            verdict: r.verdict,
            reason: r.reason,
            model: r.model,
            latencyMs: r.latencyMs,
            ...(r.failure ? { failure: r.failure } : {}),
            ...(tokens ? { tokens } : {}),
            ...how,
          },
        })
        .then(
          () => undefined,
          (err: unknown) => this.deps.log.error({ err }, 'audit write failed'),
        );
    }
  }

  /**
   * The person's own messages in this session, oldest first: the text of each turn's inbound
   * message (never tool results, assistant text or summaries). In a room, only the speaker's.
   */
  private personMessages(): Promise<string[]> {
    this.messages ??= this.readPersonMessages().catch((err: unknown) => {
      this.deps.log.warn({ err }, 'could not read the person’s messages for the classifier; it sees the current one only');
      return [this.deps.scrub(this.ctx.message.text)];
    });
    return this.messages;
  }

  private async readPersonMessages(): Promise<string[]> {
    const { storage } = this.deps;
    const { session, turn, message } = this.ctx;
    const turnIds = new Set<string>();
    for (const e of await storage.sessions.load(session.id)) {
      if (e.kind === 'user' && e.turnId && e.turnId !== turn.id) turnIds.add(e.turnId);
    }
    const texts: string[] = [];
    for (const id of [...turnIds].slice(-MAX_PERSON_MESSAGES)) {
      const t = await storage.turns.get(id);
      const item = t ? await storage.turns.inbox(t.inboxId) : null;
      if (!item) continue;
      const mine = session.scope === 'dm' || (this.speaker !== undefined && item.message.principalId === this.speaker);
      if (mine && item.message.text) texts.push(this.deps.scrub(item.message.text));
    }
    texts.push(this.deps.scrub(message.text));
    return texts;
  }
}

function tokensOf(u: Usage): { input: number; output: number; cacheRead: number; cacheWrite: number } {
  return { input: u.inputTokens, output: u.outputTokens, cacheRead: u.cacheReadInputTokens, cacheWrite: u.cacheCreationInputTokens };
}
