import { z } from 'zod';
import { runCommandHook, runHttpHook, HookRunError, type CommandHook, type HttpHook } from './hook-runners.js';
import { matchToolName } from './matchers.js';
import type { BudgetExceededDetail } from '../budgets/gate.js';
import type { PreToolUseCallback } from './pipeline.js';

/** The events hooks can be configured for. */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'PermissionDenied',
  'UserPromptSubmit',
  'SessionStart',
  'Stop',
  'PreCompact',
  'PostCompact',
  'BudgetExceeded',
] as const;

/** One hook event. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Events about one tool call; only for these does a hook's `matcher` (tool name pattern) apply. */
export const TOOL_HOOK_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>([
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'PermissionDenied',
]);

/** One configured hook: a command or an HTTP endpoint, optionally limited to some tools. */
export type HookDefinition = (CommandHook | HttpHook) & {
  /**
   * Tool names this hook runs for: `|`-separated alternatives, each a name, an MCP server prefix
   * or a `*` glob (`write_file|edit_file`, `mcp__github__*`). Absent, empty or `*`: every tool.
   */
  matcher?: string;
};

/** Hooks by event. */
export type HooksConfig = Partial<Record<HookEvent, readonly HookDefinition[]>>;

const base = { matcher: z.string().optional(), timeoutMs: z.number().int().positive().max(600_000).optional() };

/** zod schema of one {@link HookDefinition}, for config parsing at the edge. */
export const hookDefinitionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    ...base,
    type: z.literal('command'),
    command: z
      .array(z.string())
      .min(1)
      .refine((argv) => argv[0] !== '', 'the program must not be empty'),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  }),
  z.strictObject({
    ...base,
    type: z.literal('http'),
    url: z.url({ protocol: /^https?$/u }),
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);

/** zod schema of {@link HooksConfig}. */
export const hooksConfigSchema = z.partialRecord(z.enum(HOOK_EVENTS), z.array(hookDefinitionSchema));

/** What one hook said. Every field is optional: `{}` is no opinion. */
export interface HookOpinion {
  decision?: 'allow' | 'deny' | 'ask';
  reason?: string;
  /** A replacement tool input (PreToolUse); revalidated against the tool's schema before use. */
  updatedInput?: unknown;
  /** Extra text for the model (PostToolUse, PostToolUseFailure). */
  additionalContext?: string;
}

const opinionSchema = z.object({
  decision: z.enum(['allow', 'deny', 'ask']).optional(),
  reason: z.string().optional(),
  updatedInput: z.unknown().optional(),
  additionalContext: z.string().max(20_000).optional(),
});

/** What every hook payload carries: the turn it is about. */
export interface HookTurnFields {
  sessionId: string;
  turnId: string;
  agentId: string;
}

/** What a hook about one tool call is sent besides the turn: `toolName` drives the matcher. */
export interface HookToolFields extends HookTurnFields {
  toolName: string;
  toolInput: unknown;
  toolUseId: string;
}

/**
 * What is sent to a hook for each event (as JSON, with `hookEvent` added). Every
 * {@link HookEvent} has an entry: {@link runHooks} accepts only the payload of its event.
 */
export interface HookPayloads {
  /** Before a tool call is decided; an opinion may allow, deny, ask or rewrite the input. */
  PreToolUse: HookToolFields;
  /** After a tool call succeeded: `toolResult` is the tool's result content. */
  PostToolUse: HookToolFields & { toolResult: unknown };
  /** After a tool call failed: `toolResult` is the error content. */
  PostToolUseFailure: HookToolFields & { toolResult: unknown };
  /** A call waits for approval: `reason` says why it was asked. */
  PermissionRequest: HookToolFields & { reason: string };
  /** A call was refused: `reason` is the refusal. */
  PermissionDenied: HookToolFields & { reason: string };
  /** Before the first model call of a turn: `prompt` is the person's message. */
  UserPromptSubmit: HookTurnFields & { prompt: string };
  /** Before the first turn of a session. */
  SessionStart: HookTurnFields;
  /** After a turn ended: `reason` is how it ended. */
  Stop: HookTurnFields & { reason: string };
  /** Before a compaction's summary call: an opinion's `additionalContext` is added to the summary instructions. */
  PreCompact: HookTurnFields & { trigger: 'auto' | 'reactive' | 'manual'; tokensBefore: number; instructions?: string };
  /** After a compaction boundary was appended. */
  PostCompact: HookTurnFields & { trigger: 'auto' | 'reactive' | 'manual'; tokensBefore: number; tokensAfter: number; throughSeq: number };
  /** A budget refused a model call (the turn ends `budget_exceeded`); see `BudgetExceededDetail` (budgets/gate.ts). */
  BudgetExceeded: HookTurnFields & BudgetExceededDetail;
}

/** The payload of one hook event (see {@link HookPayloads}). */
export type HookPayload<E extends HookEvent = HookEvent> = HookPayloads[E];

/** The tool a payload is about, for events about one tool call. */
function toolNameOf(payload: HookPayload): string | undefined {
  return 'toolName' in payload ? payload.toolName : undefined;
}

/** A hook that failed, timed out or answered nonsense. */
export interface HookFailure {
  hook: string;
  kind: HookRunError['kind'];
  error: string;
}

/**
 * The outcome of {@link runHooks}. `status` is `failed` only for `PermissionRequest` when a
 * hook failed: the caller must then leave the ask to people (a deny opinion may still be honoured).
 */
export interface HookRunResult {
  status: 'ok' | 'failed';
  /** Opinions of the hooks that answered something, in configuration order. */
  opinions: HookOpinion[];
  failures: HookFailure[];
}

/** The logger hooks report failures to (a pino logger fits). */
export interface HookLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** Options of {@link runHooks}. */
export interface RunHooksOptions {
  /** Per-hook timeout when the hook sets none. Default 10 s. */
  defaultTimeoutMs?: number;
  /** The whole environment command hooks get (plus their own `env`); the gateway's is not inherited. */
  env?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  aliases?: Readonly<Record<string, string>>;
}

/** Default hook timeout. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;

/** Whether a hook `matcher` covers a tool name (see {@link HookDefinition.matcher}). */
export function hookMatches(matcher: string | undefined, toolName: string | undefined, aliases?: Readonly<Record<string, string>>): boolean {
  const alternatives = (matcher ?? '')
    .split('|')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (alternatives.length === 0 || alternatives.includes('*')) return true;
  if (toolName === undefined) return false;
  return alternatives.some((alt) => matchToolName(alt, toolName, aliases));
}

/** A loggable name for a hook; never includes headers, query strings or environment. */
export function hookLabel(hook: HookDefinition): string {
  if (hook.type === 'command') return `command:${hook.command[0] ?? ''}`;
  try {
    const u = new URL(hook.url);
    return `http:${u.origin}${u.pathname}`;
  } catch {
    return 'http:(invalid url)';
  }
}

/**
 * Runs the hooks configured for `event` whose matcher covers `payload.toolName` (the matcher is
 * ignored for events that are not about a tool), in parallel, and collects their opinions.
 * A hook that fails (spawn error, non-zero exit, non-2xx, timeout, output that is not a JSON
 * object of the opinion shape) is logged and counts as no opinion; for `PermissionRequest` the
 * result's status is then `failed`. Empty output is a valid "no opinion". Never throws.
 */
export async function runHooks<E extends HookEvent>(
  event: E,
  payload: HookPayloads[E],
  hooks: HooksConfig,
  log: HookLog,
  opts: RunHooksOptions = {},
): Promise<HookRunResult> {
  const toolName = toolNameOf(payload);
  const selected = ((Object.hasOwn(hooks, event) ? hooks[event] : undefined) ?? []).filter(
    (h) => !TOOL_HOOK_EVENTS.has(event) || hookMatches(h.matcher, toolName, opts.aliases),
  );
  if (selected.length === 0) return { status: 'ok', opinions: [], failures: [] };
  let body: string;
  try {
    body = JSON.stringify({ hookEvent: event, ...payload });
  } catch (err) {
    const error = `the payload is not serializable: ${err instanceof Error ? err.message : String(err)}`;
    const failures = selected.map((h) => ({ hook: hookLabel(h), kind: 'bad_output' as const, error }));
    for (const f of failures) log.warn({ event, ...f }, 'hook failed; counted as no opinion');
    return { status: event === 'PermissionRequest' ? 'failed' : 'ok', opinions: [], failures };
  }
  const outcomes = await Promise.all(selected.map((h) => runOne(h, body, opts)));
  const opinions: HookOpinion[] = [];
  const failures: HookFailure[] = [];
  outcomes.forEach((o, i) => {
    if ('opinion' in o) {
      if (o.opinion) opinions.push(o.opinion);
      return;
    }
    const failure = { hook: hookLabel(selected[i] as HookDefinition), kind: o.error.kind, error: o.error.message };
    failures.push(failure);
    log.warn({ event, ...failure }, 'hook failed; counted as no opinion');
  });
  const status = event === 'PermissionRequest' && failures.length > 0 ? 'failed' : 'ok';
  return { status, opinions, failures };
}

async function runOne(hook: HookDefinition, body: string, opts: RunHooksOptions): Promise<{ opinion: HookOpinion | undefined } | { error: HookRunError }> {
  const runner = { timeoutMs: hook.timeoutMs ?? opts.defaultTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, env: opts.env, signal: opts.signal };
  try {
    const text = hook.type === 'command' ? await runCommandHook(hook, body, runner) : await runHttpHook(hook, body, runner);
    return { opinion: parseOpinion(text) };
  } catch (err) {
    return { error: err instanceof HookRunError ? err : new HookRunError('spawn', err instanceof Error ? err.message : String(err), { cause: err }) };
  }
}

/**
 * Parses a hook's output: empty → no opinion (`undefined`); a JSON object of the
 * {@link HookOpinion} shape → that opinion, extra keys dropped (`undefined` when it says nothing).
 *
 * @throws {HookRunError} (`bad_output`) for anything else.
 */
export function parseOpinion(text: string): HookOpinion | undefined {
  if (text.trim() === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HookRunError('bad_output', 'answered something that is not JSON');
  }
  const parsed = opinionSchema.safeParse(json);
  if (!parsed.success) {
    throw new HookRunError(
      'bad_output',
      `answered JSON that is not an opinion: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
  const opinion: HookOpinion = {};
  if (parsed.data.decision !== undefined) opinion.decision = parsed.data.decision;
  if (parsed.data.reason !== undefined) opinion.reason = parsed.data.reason;
  if (parsed.data.updatedInput !== undefined) opinion.updatedInput = parsed.data.updatedInput;
  if (parsed.data.additionalContext !== undefined) opinion.additionalContext = parsed.data.additionalContext;
  return Object.keys(opinion).length === 0 ? undefined : opinion;
}

/**
 * Adapts configured PreToolUse hooks to the pipeline's callback: each call runs
 * `runHooks('PreToolUse', { toolName, toolInput, toolUseId, sessionId, turnId, agentId }, …)`
 * and hands back the opinions (failed hooks count as no opinion).
 */
export function preToolUseFromHooks(hooks: HooksConfig, log: HookLog, opts: RunHooksOptions = {}): PreToolUseCallback {
  return async ({ tool, input, ctx }) => {
    const payload: HookPayloads['PreToolUse'] = {
      toolName: tool.name,
      toolInput: input,
      toolUseId: ctx.toolUseId,
      sessionId: ctx.sessionId,
      turnId: ctx.turnId,
      agentId: ctx.agentId,
    };
    const signal = opts.signal ? AbortSignal.any([opts.signal, ctx.signal]) : ctx.signal;
    return (await runHooks('PreToolUse', payload, hooks, log, { ...opts, signal })).opinions;
  };
}
