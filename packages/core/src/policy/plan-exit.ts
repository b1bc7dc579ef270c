import type { AnyTool, Decision, ToolContext } from '@switchboard/agent';
import { z } from 'zod';
import type { ApprovalOutcome, ApprovalRequest } from '../approvals/broker.js';
import type { TurnPolicyContext } from '../engine.js';
import { lowerMode, type PermissionMode } from '../permissions/modes.js';
import { type AskDeps, requestTurnApproval } from './ask.js';

/** The tool's name. */
export const EXIT_PLAN_MODE = 'exit_plan_mode';

/** The longest plan the model may present (characters). */
export const PLAN_MAX_CHARS = 20_000;

/** The modes a person may leave plan mode for, least trusted first (each capped by the broader scopes). */
const EXIT_MODES: readonly PermissionMode[] = Object.freeze(['default', 'acceptEdits']);

/** The question every plan approval asks, before the plan. */
export const PLAN_QUESTION = 'Proceed with this plan?';

const planInput = z.strictObject({
  plan: z.string().trim().min(1, 'the plan is empty').max(PLAN_MAX_CHARS, `the plan is longer than ${PLAN_MAX_CHARS} characters`),
});

/**
 * The modes a plan approval offers: `default` and `acceptEdits`, each lowered to `broader` (the
 * mode the scopes broader than the session and the role's ceiling give), least trusted first,
 * without repeats — a person whose ceiling is `default` is offered `default` only.
 */
export function planExitChoices(broader: PermissionMode): PermissionMode[] {
  return [...new Set(EXIT_MODES.map((m) => lowerMode(m, broader)))];
}

/** How a chat labels the allow button of a plan approval's choice. */
export function planChoiceLabel(choice: string): string {
  if (choice === 'default') return 'Proceed (ask before edits)';
  if (choice === 'acceptEdits') return 'Proceed (accept edits)';
  return `Proceed (${choice} mode)`;
}

/** What {@link PlanExit} works with, for one turn. */
export interface PlanExitDeps extends Pick<AskDeps, 'storage' | 'broker' | 'log'> {
  ctx: TurnPolicyContext;
  /** The speaker: the person who approves (with whoever may approve their calls). */
  requesterPrincipalId: string;
  /** The mode the scopes broader than the session give now, the role's ceiling included. */
  broaderMode(): Promise<PermissionMode>;
  /** The mode in force for the rest of the turn (changes once a plan is approved). */
  currentMode(): PermissionMode;
  /** A deny-first check of the call (deny rules, PreToolUse hooks): the refusal, or undefined. Nothing it says allows. */
  refusal(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<string | undefined>;
  /** Puts the session (and the rest of the turn) in `mode`: stored as the session's mode setting and audited. */
  switchTo(mode: PermissionMode, approval: ApprovalOutcome['approval']): Promise<void>;
  /** Scrubs secrets from text people see. */
  scrub(text: string): string;
  /**
   * The PermissionRequest hooks' responder for one call, if any. Handed to the broker like every
   * ask's, so the one rule for automatic responders (`mayAnswerAutomatically`) is what keeps them
   * from a plan approval — and the broker logs that it waits for a person.
   */
  responder?(input: unknown, toolUseId: string): ApprovalRequest['autoResponder'] | undefined;
}

/** What the person decided about one plan, for the tool's result. */
type Verdict = { approved: true; mode: PermissionMode } | { approved: false; reason: string };

/**
 * `exit_plan_mode` for one turn whose session is in plan mode set at session scope: the tool the
 * model calls to present its plan, and the check that turns the call into a person's approval.
 * The approval (source `plan`) is answered by people only — never a hook or a classifier, never
 * "always allow"; approving switches the session to the chosen mode (at most what the broader
 * scopes give), denying keeps plan mode.
 */
export class PlanExit {
  /** The verdict of each call, by tool_use id, for the tool's result. */
  private readonly verdicts = new Map<string, Verdict>();
  readonly tool: AnyTool;

  constructor(private readonly deps: PlanExitDeps) {
    this.tool = {
      name: EXIT_PLAN_MODE,
      description:
        'Present your plan to the person and ask to leave plan mode. Call it once you have investigated with read-only tools ' +
        'and know what you would change. `plan` is markdown: the steps, the files you would touch and why. The person ' +
        'approves (the session then leaves plan mode) or declines (keep planning and revise).',
      input: planInput as z.ZodType<unknown>,
      readOnly: true,
      concurrencySafe: false,
      call: async (_input, ctx) => this.result(ctx.toolUseId),
    };
  }

  /** The permission decision of one `exit_plan_mode` call: a person's approval, whatever any rule or hook allows. */
  async check(input: unknown, ctx: ToolContext): Promise<Decision> {
    const { deps } = this;
    const now = deps.currentMode();
    if (now !== 'plan') {
      return { behavior: 'deny', kind: 'mode', reason: `the session is not in plan mode (it is in ${now} mode), so there is no plan mode to leave` };
    }
    const broader = await deps.broaderMode();
    if (broader === 'plan') {
      return {
        behavior: 'deny',
        kind: 'mode',
        reason:
          'plan mode is set for this conversation, agent, channel or role, not for this session, so it cannot be left by approving a plan. ' +
          'Keep to read-only tools and present your plan as text',
      };
    }
    const refused = await deps.refusal(this.tool, input, ctx);
    if (refused !== undefined) return { behavior: 'deny', kind: 'rule', reason: refused };
    const plan = (input as { plan: string }).plan;
    const choices = planExitChoices(broader);
    const autoResponder = deps.responder?.(input, ctx.toolUseId);
    const outcome = await requestTurnApproval(
      deps,
      deps.ctx,
      {
        name: EXIT_PLAN_MODE,
        toolUseId: ctx.toolUseId,
        input,
        summary: deps.scrub(`${PLAN_QUESTION}\n\n${plan}`),
        reason: 'approving leaves plan mode',
        source: 'plan',
        signal: ctx.signal,
        alwaysRule: '[]',
        choices,
        ...(autoResponder ? { autoResponder } : {}),
      },
      deps.requesterPrincipalId,
    );
    if (!outcome.allowed) {
      this.verdicts.set(ctx.toolUseId, { approved: false, reason: outcome.reason ?? 'the plan was declined' });
      return { behavior: 'allow' };
    }
    // The broader scopes may have changed while the person read the plan: never above what they give now.
    const chosen = choices.find((c) => c === outcome.choice) ?? choices[0] ?? 'default';
    const mode = lowerMode(chosen, await deps.broaderMode());
    await deps.switchTo(mode, outcome.approval);
    this.verdicts.set(ctx.toolUseId, { approved: true, mode });
    return { behavior: 'allow' };
  }

  private async result(toolUseId: string): Promise<{ content: string; isError?: boolean }> {
    const v = this.verdicts.get(toolUseId);
    this.verdicts.delete(toolUseId);
    if (!v) return { content: 'exit_plan_mode ran without a decision about the plan; the session stays in plan mode.', isError: true };
    if (!v.approved) {
      return {
        content:
          `The person did not approve the plan (${v.reason}). The session stays in plan mode: keep planning with read-only tools, ` +
          'revise the plan with their feedback, and call exit_plan_mode again when it is ready.',
        isError: true,
      };
    }
    const how =
      v.mode === 'acceptEdits'
        ? 'file edits inside the workspace run without asking; other changes still ask the person'
        : v.mode === 'default'
          ? 'each change (a write, an edit, a command) still asks the person for approval'
          : `calls follow ${v.mode} mode`;
    return { content: `The person approved the plan. The session left plan mode and is now in ${v.mode} mode: ${how}. Carry out the plan.` };
  }
}
