import { describeZodError, type AnyTool, type AskSource, type Decision, type PermissionResult, type ToolContext } from '@switchboard/agent';
import type { HookOpinion } from './hooks.js';
import { toolMatchKind, type MatchKind, type MatchOptions } from './matchers.js';
import type { PermissionMode } from './modes.js';
import { classifyCall, evaluateParts, isBindingOwnAsk, type PartRuleEvaluation, partsOf } from './part-rules.js';
import { toWorkspaceRelative } from './path-glob.js';
import { realRuleContent } from './real-path.js';
import { checkSafety, type SafetyHit, type SafetyOptions } from './safety.js';
import { evaluateRules, type PermissionScope, type RuleEvaluation, type RuleSet, type ScopedRule } from './scopes.js';

/** Which step of the pipeline decided. */
export type PipelineSource = 'rule' | 'mode' | 'hook' | 'tool' | 'safety';

/** One tool call, after schema validation and the tool's `validateInput`. */
export interface PermissionCall {
  tool: AnyTool;
  /** The parsed input (output of `tool.input`). */
  input: unknown;
  ctx: ToolContext;
}

/** What a PreToolUse callback is told. */
export interface PreToolUseRequest {
  tool: AnyTool;
  input: unknown;
  ctx: ToolContext;
}

/**
 * Collects PreToolUse hook opinions (e.g. `runHooks('PreToolUse', …).opinions`).
 * Contract: must not throw (a throw denies the call); return `[]` for no opinion.
 */
export type PreToolUseCallback = (req: PreToolUseRequest) => Promise<readonly HookOpinion[]>;

/** Everything the pipeline decides with, resolved from the inbound message and the config. */
export interface PermissionEnv extends Pick<MatchOptions, 'aliases' | 'matchKinds'> {
  ruleSet: RuleSet;
  /** The scope instances that apply to this call (see `scopesOf`). */
  scopes: readonly PermissionScope[];
  /** The effective mode (see `effectiveMode`). */
  mode: PermissionMode;
  preToolUse?: PreToolUseCallback;
  safety?: SafetyOptions;
}

interface ResultBase {
  source: PipelineSource;
  /** Human-readable: says why, for the model, the person asked and the logs. */
  reason: string;
  /** The deciding rule, when a rule decided (or was converted by the mode). */
  rule?: ScopedRule;
}

/**
 * An allowed call, or one to ask about. `input` is what will run; `updatedInput` is set when a
 * hook or the tool rewrote it. An ask's `source` says which step asked (see `mayAnswerAutomatically`).
 */
export type PipelineResult =
  | (ResultBase & { behavior: 'allow'; input: unknown; updatedInput?: unknown })
  | (Omit<ResultBase, 'source'> & { behavior: 'ask'; source: AskSource; input: unknown; updatedInput?: unknown })
  | (ResultBase & { behavior: 'deny' });

class Stop {
  constructor(readonly result: PipelineResult) {}
}

/**
 * Decides one tool call. Steps, in order (the first deny wins; deny beats ask beats allow):
 *
 * 1. **PreToolUse hooks** (`env.preToolUse`): a deny denies; an `updatedInput` (the last one
 *    given) is revalidated with the tool's schema and `validateInput`, and every later step sees
 *    it; an ask asks; an allow only skips the mode's prompt.
 * 2. **Rules** (`evaluateRules` on the tool's `ruleContent`): deny denies; ask asks; allow skips
 *    the mode's prompt. For a `path` tool the rules see the path as written **and** where it
 *    really leads (symlinks resolved, relative to the workspace's real root): a deny or ask on
 *    either counts; an allow must cover both. A tool with `ruleContents` (`exec`: one content per
 *    simple command) has its rules evaluated on **every part**: a deny on any part denies (the
 *    reason names the part and the rule), an ask on any part asks, and the rules allow the call
 *    only when every part is allowed by some rule (`exec(npm test)` exact, `exec(git:*)` prefix,
 *    `Bash(...)` as an alias; a prefix allow never covers a part holding shell syntax, see
 *    `matchCommand`). A throw or an empty list from `ruleContents` refuses the call.
 * 3. **The tool's `checkPermissions`**: deny denies (kind `safety` when its source is `safety`);
 *    ask asks — an ask with source `safety` or `sandbox` in every mode; an ask with source `mode`
 *    is the tool's own mode prompt (`web_fetch`: a domain no rule allows), asked only where the
 *    mode's prompt would (after every allow, not under `bypassPermissions`), even for a read-only
 *    tool; any other ask is skipped by `bypassPermissions`; allow skips the mode's prompt (an `updatedInput` is revalidated and
 *    rules re-checked); `passthrough` may classify the call: `access: 'read'` makes it read-only
 *    for step 5, `access: 'edit'` a file-system edit inside the workspace (`acceptEdits` allows
 *    it); without `access` the tool's static `readOnly` decides.
 * 4. **Safety checks** (`checkSafety`, on the written and the real path): a non-read-only tool
 *    writing a protected path is asked, in every mode — no allow skips it.
 * 5. **Mode**: `plan` denies every call that is not read-only (step 3's classification);
 *    `dontAsk` turns every ask into a deny; otherwise a pending ask is returned; else the call is
 *    allowed by a rule, the tool, a hook, being read-only, `bypassPermissions`, or `acceptEdits`
 *    or `auto` for a file edit inside the workspace; anything left is asked (`default`,
 *    `acceptEdits`, `auto` — where the auto-mode classifier answers it, source `mode`) or denied
 *    (`dontAsk`).
 *
 * Ask rules, hook asks and the tool's own `safety`/`sandbox` asks still ask under
 * `bypassPermissions`: they are explicit statements, like deny rules; only the tool's other asks
 * and the mode's prompt are bypassed. No allow rule or hook allow answers any ask.
 * Every ask says which step raised it (`source`: `safety`, `rule`, `hook`, the tool's own —
 * `safety` unless it names `mode`, `rule`, `hook` or `sandbox` — or `mode` for the default
 * prompt); only `mode` asks may go to automatic responders (`mayAnswerAutomatically`).
 * Never throws: a failing hook callback, malformed rule or throwing tool check denies the call.
 */
export async function decidePermission(call: PermissionCall, env: PermissionEnv): Promise<PipelineResult> {
  try {
    return await decide(call, env);
  } catch (err) {
    if (err instanceof Stop) return err.result;
    // A bug in the pipeline must not let a call through.
    return deny('safety', `the permission check failed unexpectedly, so ${call.tool.name} is refused: ${messageOf(err)}`);
  }
}

/**
 * The agent loop's {@link Decision} for a settled result (`ask` must first be resolved by a
 * person). A deny by the tool's own check is reported with kind `safety` when the tool gave
 * source `safety` (the pipeline reports it with source `safety`), else kind `rule`, the loop's
 * nearest kind.
 */
export function toDecision(result: Exclude<PipelineResult, { behavior: 'ask' }>): Decision {
  if (result.behavior === 'allow') {
    return result.updatedInput === undefined ? { behavior: 'allow' } : { behavior: 'allow', updatedInput: result.updatedInput };
  }
  return { behavior: 'deny', reason: result.reason, kind: result.source === 'tool' ? 'rule' : result.source };
}

async function decide(call: PermissionCall, env: PermissionEnv): Promise<PipelineResult> {
  const { tool, ctx } = call;
  const name = tool.name;
  const kind = toolMatchKind(name, env);
  let input = call.input;

  // 1. PreToolUse hooks: opinions only.
  const opinions = env.preToolUse
    ? await guard('hook', `a PreToolUse hook for ${name} failed`, () => env.preToolUse?.({ tool, input, ctx }) ?? Promise.resolve([]))
    : [];
  const hookDeny = opinions.find((o) => o.decision === 'deny');
  if (hookDeny) return deny('hook', hookDeny.reason ?? `a PreToolUse hook refused ${name}`);
  const rewrite = opinions.findLast((o) => o.updatedInput !== undefined);
  if (rewrite) input = await revalidate(tool, rewrite.updatedInput, ctx, 'hook', 'a PreToolUse hook');
  const hookAsk = opinions.find((o) => o.decision === 'ask');
  const hookAllow = opinions.find((o) => o.decision === 'allow');

  // 2. Rules: per part for a tool with `ruleContents`, else on the one content (and real path).
  let parts = partsFor(tool, input);
  let content = parts ? undefined : contentOf(tool, input);
  let paths = await pathsOf(kind, name, content, ctx.workspace);
  let rules = parts ? checkPartRules(env, name, parts, ctx.workspace) : checkRules(env, name, paths, ctx.workspace);

  // 3. The tool's own check.
  const own: PermissionResult = tool.checkPermissions
    ? await guard(
        'tool',
        `the permission check of ${name} failed`,
        () => tool.checkPermissions?.(input, ctx) ?? Promise.resolve({ behavior: 'passthrough' as const }),
      )
    : { behavior: 'passthrough' };
  if (own.behavior === 'deny') return deny(own.source === 'safety' ? 'safety' : 'tool', own.reason);
  if (own.behavior === 'allow' && own.updatedInput !== undefined) {
    input = await revalidate(tool, own.updatedInput, ctx, 'tool', name);
    parts = partsFor(tool, input);
    content = parts ? undefined : contentOf(tool, input);
    paths = await pathsOf(kind, name, content, ctx.workspace);
    rules = parts ? checkPartRules(env, name, parts, ctx.workspace) : checkRules(env, name, paths, ctx.workspace);
  }
  // The mode sees this call as the tool classified it (`access`), else by the tool's `readOnly`.
  const callClass = classifyCall(tool, own);

  // 4. Safety checks.
  const safety = kind === 'path' ? safetyOf(tool, paths, ctx.workspace, env.safety) : undefined;

  // 5. Mode.
  const mode = env.mode;
  if (mode === 'plan' && !callClass.readOnly) {
    return deny(
      'mode',
      `the session is in plan mode, where only read-only tools run; ${name} was not run. ` +
        'Investigate with read-only tools and present your plan; changes can be made once the person leaves plan mode',
    );
  }
  const updated = input === call.input ? {} : { updatedInput: input };
  const asks: Array<{ source: AskSource; reason: string; rule?: ScopedRule }> = [];
  // The tool's own safety and sandbox asks hold under bypassPermissions too, and are shown before
  // a rule's or a hook's (the person approving must see them); its other asks are bypassed.
  const binding = isBindingOwnAsk(own);
  const ownAsk = own.behavior === 'ask' && (binding || mode !== 'bypassPermissions') ? { source: ownAskSource(own.source), reason: own.reason } : undefined;
  if (safety) asks.push({ source: 'safety', reason: safety.reason });
  if (ownAsk && binding) asks.push(ownAsk);
  if (rules.behavior === 'ask' && rules.matched) {
    asks.push({ source: 'rule', reason: ruleReason(rules.matched, 'asks before', name) + partNote(rules), rule: rules.matched });
  }
  if (hookAsk) asks.push({ source: 'hook', reason: hookAsk.reason ?? `a PreToolUse hook asks for approval of ${name}` });
  // A tool's own `mode` ask is its version of the mode's prompt (web_fetch: a domain no rule allows): it comes last, after every allow.
  const ownModePrompt = own.behavior === 'ask' && own.source === 'mode' ? own.reason : undefined;
  if (ownAsk && !binding && ownModePrompt === undefined) asks.push(ownAsk);
  const ask = asks[0];
  if (ask) {
    if (mode === 'dontAsk') return dontAsk(ask.reason, ask.rule);
    return { behavior: 'ask', ...ask, input, ...updated };
  }
  const allow = (source: PipelineSource, reason: string, rule?: ScopedRule): PipelineResult => ({
    behavior: 'allow',
    source,
    reason,
    ...(rule ? { rule } : {}),
    input,
    ...updated,
  });
  if (rules.behavior === 'allow' && rules.matched) return allow('rule', allowReason(rules, name), rules.matched);
  if (own.behavior === 'allow') return allow('tool', `${name} allowed this call itself`);
  if (hookAllow) return allow('hook', hookAllow.reason ?? `a PreToolUse hook allowed ${name}`);
  if (ownModePrompt !== undefined && mode !== 'bypassPermissions') {
    if (mode === 'dontAsk') return dontAsk(ownModePrompt);
    return { behavior: 'ask', source: 'mode', reason: ownModePrompt, input, ...updated };
  }
  if (callClass.readOnly) return allow('mode', tool.readOnly ? `${name} is read-only` : `this ${name} call is read-only`);
  if (mode === 'bypassPermissions') return allow('mode', 'the session is in bypassPermissions mode');
  // `auto` lets what `acceptEdits` lets through; the classifier only ever sees what is left.
  if ((mode === 'acceptEdits' || mode === 'auto') && (callClass.edit || isWorkspaceEdit(kind, tool, content, ctx.workspace))) {
    return allow('mode', `the session is in ${mode} mode and ${name} edits a file inside the workspace`);
  }
  const prompt = `${name} changes things and no rule allows it, so a person must approve it (${mode} mode)`;
  if (mode === 'dontAsk') return dontAsk(prompt);
  return { behavior: 'ask', source: 'mode', reason: prompt, input, ...updated };
}

/**
 * The ask source of a tool's own `ask`: what the tool says, where that is an ask source; any
 * other label counts as the tool's own safety concern (people answer it).
 */
function ownAskSource(source: string): AskSource {
  return source === 'mode' || source === 'rule' || source === 'hook' || source === 'sandbox' ? source : 'safety';
}

/** Whether a call is a file edit that `acceptEdits` lets through: a non-read-only path tool inside the workspace. */
export function isWorkspaceEdit(kind: MatchKind, tool: { readOnly: boolean }, content: string | undefined, workspace: string): boolean {
  return kind === 'path' && !tool.readOnly && content !== undefined && toWorkspaceRelative(content, workspace) !== undefined;
}

function deny(source: PipelineSource, reason: string, rule?: ScopedRule): PipelineResult {
  return { behavior: 'deny', source, reason, ...(rule ? { rule } : {}) };
}

function dontAsk(reason: string, rule?: ScopedRule): PipelineResult {
  return deny('mode', `the session is in dontAsk mode, so nobody is asked and this call is refused (${reason})`, rule);
}

/** Describes a scope for people: `the gateway`, `principal p_1`, `every session`. */
export function describeScope(scope: PermissionScope): string {
  if (scope.kind === 'gateway') return 'the gateway';
  return scope.id === undefined ? `every ${scope.kind}` : `${scope.kind} ${scope.id}`;
}

function ruleReason(rule: ScopedRule, verb: string, toolName: string): string {
  return `the rule ${rule.rule}, set for ${describeScope(rule.scope)}, ${verb} ${toolName} here`;
}

/**
 * The rule contents of one call: the path as written, then (for a `path` tool, when it differs)
 * where it really leads. A path whose real location cannot be found is refused.
 */
async function pathsOf(kind: MatchKind, name: string, content: string | undefined, workspace: string): Promise<RuleContents> {
  if (kind !== 'path' || content === undefined) return { written: content };
  let real: string;
  try {
    real = await realRuleContent(content, workspace);
  } catch (err) {
    throw new Stop(deny('safety', `${name} is refused: ${messageOf(err)}`));
  }
  const lexical = toWorkspaceRelative(content, workspace);
  return real === (lexical === '' ? '.' : lexical) ? { written: content } : { written: content, real };
}

/** A call's rule content as written, and its real path when a symlink makes it differ. */
interface RuleContents {
  written: string | undefined;
  real?: string;
}

function safetyOf(tool: AnyTool, paths: RuleContents, workspace: string, opts: SafetyOptions | undefined): SafetyHit | undefined {
  const written = checkSafety(tool, paths.written, workspace, opts);
  if (written || paths.real === undefined) return written;
  const real = checkSafety(tool, paths.real, workspace, opts);
  return real ? { ...real, reason: `${paths.written} leads to ${paths.real}, so ${real.reason}` } : undefined;
}

function checkRules(env: PermissionEnv, name: string, paths: RuleContents, workspace: string): RuleEvaluation {
  const evaluate = (content: string | undefined): RuleEvaluation => {
    try {
      return evaluateRules(env.ruleSet, name, content, env.scopes, { aliases: env.aliases, matchKinds: env.matchKinds, workspace });
    } catch (err) {
      throw new Stop(deny('rule', `the permission rules could not be read, so ${name} is refused: ${messageOf(err)}`));
    }
  };
  const written = evaluate(paths.written);
  const real = paths.real === undefined ? undefined : evaluate(paths.real);
  const via = ` (${paths.written} leads to ${paths.real})`;
  for (const [rules, note] of [
    [written, ''],
    [real, via],
  ] as const) {
    if (rules?.behavior === 'deny' && rules.matched) throw new Stop(deny('rule', ruleReason(rules.matched, 'forbids', name) + note, rules.matched));
  }
  if (real === undefined || written.behavior === 'ask') return written;
  if (real.behavior === 'ask') return real;
  // An allow must cover where the call really lands, not only the name it used.
  return written.behavior === 'allow' && real.behavior === 'allow' ? written : { behavior: 'none' };
}

/** Rules on a call with parts: see {@link evaluateParts}; a deny stops the pipeline. */
function checkPartRules(env: PermissionEnv, name: string, parts: readonly string[], workspace: string): PartRuleEvaluation {
  const rules = evaluateParts(parts, (part) => {
    try {
      return evaluateRules(env.ruleSet, name, part, env.scopes, { aliases: env.aliases, matchKinds: env.matchKinds, workspace });
    } catch (err) {
      throw new Stop(deny('rule', `the permission rules could not be read, so ${name} is refused: ${messageOf(err)}`));
    }
  });
  if (rules.behavior === 'deny' && rules.matched) throw new Stop(deny('rule', ruleReason(rules.matched, 'forbids', name) + partNote(rules), rules.matched));
  return rules;
}

/** ` (part "rm x")` for a verdict a part decided; empty otherwise. */
function partNote(rules: PartRuleEvaluation): string {
  return rules.part === undefined ? '' : ` (part ${JSON.stringify(rules.part)})`;
}

function allowReason(rules: PartRuleEvaluation, name: string): string {
  const all = rules.rules ?? [];
  if (all.length <= 1 || !rules.matched) return rules.matched ? ruleReason(rules.matched, 'allows', name) : `a rule allows ${name} here`;
  return `every part of this ${name} call is allowed: ${all.map((r) => `${r.rule} (set for ${describeScope(r.scope)})`).join(', ')}`;
}

function partsFor(tool: AnyTool, input: unknown): string[] | undefined {
  try {
    return partsOf(tool, input);
  } catch (err) {
    throw new Stop(deny('tool', `could not tell what ${tool.name} would act on: ${messageOf(err)}`));
  }
}

function contentOf(tool: AnyTool, input: unknown): string | undefined {
  if (!tool.ruleContent) return undefined;
  try {
    return tool.ruleContent(input);
  } catch (err) {
    throw new Stop(deny('tool', `could not tell what ${tool.name} would act on: ${messageOf(err)}`));
  }
}

async function revalidate(tool: AnyTool, value: unknown, ctx: ToolContext, source: PipelineSource, who: string): Promise<unknown> {
  const parsed = tool.input.safeParse(value);
  if (!parsed.success) {
    throw new Stop(deny(source, `${who} rewrote the input of ${tool.name} into an invalid one: ${describeZodError(parsed.error)}`));
  }
  if (tool.validateInput) {
    const v = await guard(
      source,
      `validating the rewritten input of ${tool.name} failed`,
      () => tool.validateInput?.(parsed.data, ctx) ?? Promise.resolve({ ok: true as const }),
    );
    if (!v.ok) throw new Stop(deny(source, `${who} rewrote the input of ${tool.name} into an invalid one: ${v.message}`));
  }
  return parsed.data;
}

async function guard<T>(source: PipelineSource, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Stop) throw err;
    throw new Stop(deny(source, `${what}, so the call is refused: ${messageOf(err)}`));
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
