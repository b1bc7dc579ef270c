/**
 * The `exec` tool: one `bash -c` command in the session's workspace, judged by the command checks
 * (`exec-checks.ts`) before it runs and confined by the bubblewrap sandbox (`run.ts`) while it runs.
 * See docs/exec.md.
 */
import { realpath } from 'node:fs/promises';
import type { CallAccess, PermissionResult, Tool, ToolContext } from '@switchboard/agent';
import { z } from 'zod';
import type { SandboxLimits } from './bwrap-args.js';
import type { ExecCheckResult, ExecChecks } from './exec-checks.js';
import { type HostRunOptions, runOnHost } from './run-host.js';
import { WAITING_FOR_RUNNER } from './run-queue.js';
import { runSandboxed, type SandboxCallOptions, type SandboxResult, type SandboxRunOptions } from './run.js';

/** The tool's name. */
export const EXEC_TOOL = 'exec';
/** Longest command line accepted, in characters. */
export const MAX_COMMAND_CHARS = 100_000;

const execInput = z.strictObject({
  command: z.string().min(1).max(MAX_COMMAND_CHARS).describe('The shell command line to run with bash -c in the workspace (e.g. "npm test").'),
  timeout: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Milliseconds before the command and everything it started are killed (default and maximum set by the operator).'),
  description: z.string().max(300).optional().describe('What the command does and why, in a few words; shown to the person asked to approve it.'),
});

/** Input of `exec`. */
export type ExecInput = z.output<typeof execInput>;

/** What an agent's `exec` may do (`tools.exec` with `agents.<id>.toolOptions.exec` on top). */
export interface ExecAgentSettings {
  /** The host network inside the sandbox (default off). */
  network: boolean;
  /** Timeout of a call that names none. */
  timeoutMs: number;
  /** Largest `timeout` a call may ask for. */
  maxTimeoutMs: number;
  limits: SandboxLimits;
}

/** A FIFO of run slots (gateway-wide and per session); see `ExecRunQueue`. */
export interface ExecSlots {
  /** Resolves with a release function once a slot is free; calls `onWait` once if it has to wait; rejects when `signal` fires. */
  acquire(sessionId: string, signal: AbortSignal, onWait?: () => void): Promise<() => void>;
}

/** One finished run, for the audit log (never the output). */
export interface ExecRunRecord {
  sessionId: string;
  turnId: string;
  toolUseId: string;
  agentId: string;
  command: string;
  sandbox: 'bwrap' | 'none';
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  /** The host pid of bwrap (or of bash without a sandbox), the process group id. */
  pid?: number;
  /** The uid the command ran as inside the sandbox. */
  uid?: number;
  /** Set when the run could not start (bwrap missing, every uid busy, …). */
  error?: string;
}

/** Everything `exec` needs, resolved by the gateway (nothing here reads the environment). */
export interface ExecToolOptions {
  checks: ExecChecks;
  /** `bwrap` (default): every command in the sandbox. `none`: on the host, and every call asks (source `sandbox`). */
  sandbox: 'bwrap' | 'none';
  /** The sandbox runner's options but the per-run ones (workspace, network, limits). */
  runner: Omit<SandboxRunOptions, 'workspace' | 'network' | 'limits'>;
  /** The settings of one agent's `exec`. */
  settingsFor(agentId: string): ExecAgentSettings;
  /** Run slots; absent: no queue (every call runs at once, bounded by the uid range). */
  slots?: ExecSlots;
  /** Told once bwrap (or bash) is spawned. Must not throw. */
  onSpawn?(info: { sessionId: string; turnId: string; toolUseId: string; pid: number }): void;
  /** Told of every finished or failed run. Must not throw. */
  onRun?(record: ExecRunRecord): void;
}

/** The per-call classification the permission pipeline uses (see `PermissionResult`'s `access`). */
function accessOf(result: ExecCheckResult): CallAccess | undefined {
  if (result.readOnly) return 'read';
  return result.parts.every((part) => part.kind === 'read' || part.kind === 'edit') ? 'edit' : undefined;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** What the model sees of one run: a status line, then the output (head and tail when cut). */
export function formatExecResult(result: SandboxResult): string {
  const status = result.timedOut
    ? 'Timed out and killed'
    : result.aborted
      ? 'Stopped'
      : result.exitCode !== null
        ? `Exit code ${result.exitCode}`
        : `Killed by ${result.signal ?? 'a signal'}`;
  const cut = result.truncated ? ' · output cut: head and tail kept' : '';
  const body = result.output.length > 0 ? result.output : '(no output)';
  return `${status} · ${seconds(result.durationMs)}${cut}\n\n${body}`;
}

/** Creates `exec`. */
export function createExecTool(options: ExecToolOptions): Tool<ExecInput> {
  const { checks } = options;
  const maxResultChars = (options.runner.outputBudget ?? 30_000) + 400;
  const analyze = (input: ExecInput, ctx: ToolContext) => checks.analyze(input.command, { workspace: ctx.workspace, home: ctx.workspace });
  return {
    name: EXEC_TOOL,
    description:
      'Run one shell command (bash -c) with the workspace as the working directory, and get its exit code and output ' +
      '(stdout and stderr interleaved; long output is cut to its head and tail). Commands run in a sandbox: only the ' +
      'workspace is writable, there is no network unless the operator allows it, and resource limits apply. Commands ' +
      'that only read run without asking; anything that changes files may need a person to approve it.',
    input: execInput,
    readOnly: false,
    concurrencySafe: false,
    maxResultChars,
    ruleContents: (input) => checks.ruleContents(input),
    async validateInput(input, ctx) {
      const settings = options.settingsFor(ctx.agentId);
      if (input.timeout !== undefined && input.timeout > settings.maxTimeoutMs) {
        return {
          ok: false,
          message: `timeout: at most ${settings.maxTimeoutMs} ms is allowed (tools.exec.maxTimeout); omit it for the default ${settings.timeoutMs} ms`,
        };
      }
      return { ok: true };
    },
    async checkPermissions(input, ctx): Promise<PermissionResult> {
      const result = analyze(input, ctx);
      if (result.outcome === 'deny') return { behavior: 'deny', reason: result.reason, source: 'safety' };
      if (result.outcome === 'ask') return { behavior: 'ask', reason: result.reason, source: 'safety' };
      if (options.sandbox === 'none') {
        return {
          behavior: 'ask',
          source: 'sandbox',
          reason: 'tools.exec.sandbox is "none": this command would run on the host without a sandbox, so a person must approve every call',
        };
      }
      const access = accessOf(result);
      return access ? { behavior: 'passthrough', access } : { behavior: 'passthrough' };
    },
    async call(input, ctx) {
      const settings = options.settingsFor(ctx.agentId);
      const timeoutMs = Math.min(input.timeout ?? settings.timeoutMs, settings.maxTimeoutMs);
      const started = Date.now();
      const release = options.slots
        ? await options.slots.acquire(ctx.sessionId, ctx.signal, () => ctx.progress?.({ message: WAITING_FOR_RUNNER, elapsedMs: Date.now() - started }))
        : undefined;
      const fields = {
        sessionId: ctx.sessionId,
        turnId: ctx.turnId,
        toolUseId: ctx.toolUseId,
        agentId: ctx.agentId,
        command: input.command,
        sandbox: options.sandbox,
      };
      let pid: number | undefined;
      const call: SandboxCallOptions = {
        signal: ctx.signal,
        timeoutMs,
        onProgress: ({ lines, elapsedMs }) =>
          ctx.progress?.({ message: `${lines} line${lines === 1 ? '' : 's'} so far, ${seconds(elapsedMs)}`, lines, elapsedMs }),
        onSpawn: (spawned) => {
          pid = spawned;
          options.onSpawn?.({ sessionId: ctx.sessionId, turnId: ctx.turnId, toolUseId: ctx.toolUseId, pid: spawned });
        },
      };
      try {
        const workspace = await realpath(ctx.workspace);
        const result =
          options.sandbox === 'none'
            ? await runOnHost(hostOptions(options.runner, workspace), input.command, call)
            : await runSandboxed({ ...options.runner, workspace, network: settings.network, limits: settings.limits }, input.command, call);
        options.onRun?.({
          ...fields,
          exitCode: result.exitCode,
          signal: result.signal,
          durationMs: result.durationMs,
          timedOut: result.timedOut,
          aborted: result.aborted,
          truncated: result.truncated,
          ...(pid !== undefined ? { pid } : {}),
          ...(result.uid !== undefined ? { uid: result.uid } : {}),
        });
        const content = formatExecResult(result);
        return result.timedOut || result.aborted || result.exitCode === null ? { content, isError: true } : { content };
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        options.onRun?.({
          ...fields,
          exitCode: null,
          signal: null,
          durationMs: Date.now() - started,
          timedOut: false,
          aborted: false,
          truncated: false,
          ...(pid !== undefined ? { pid } : {}),
          error,
        });
        throw new Error(`the command could not be started: ${error}`);
      } finally {
        release?.();
      }
    },
  };
}

function hostOptions(runner: ExecToolOptions['runner'], workspace: string): HostRunOptions {
  return {
    workspace,
    path: runner.path,
    ...(runner.bashPath ? { bashPath: runner.bashPath } : {}),
    ...(runner.outputBudget ? { outputBudget: runner.outputBudget } : {}),
    ...(runner.progressIntervalMs ? { progressIntervalMs: runner.progressIntervalMs } : {}),
    ...(runner.killGraceMs ? { killGraceMs: runner.killGraceMs } : {}),
  };
}
