import type { AnyTool } from '@switchboard/agent';
import type { Storage } from '@switchboard/core';
import { createExecTool, type ExecRunRecord, loadExecChecks } from '@switchboard/tools/exec';
import { DEFAULT_SANDBOX_LIMITS, describeSystemLayout, ExecRunQueue, probeSandbox, type SandboxRunOptions, UidAllocator } from '@switchboard/tools';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { type ExecConfig, execSettingsOf, uidRange } from '../config-tools.js';

/** What the CLI resolved once about the host for `exec` (no environment is read below the CLI). */
export interface ExecHost {
  /** `PATH` inside the sandbox: the CLI's PATH entries under the system folders the sandbox mirrors. */
  path: string;
  /** Absolute path of bwrap: `tools.exec.bwrapPath`, else `bwrap` found on the CLI's PATH; undefined when not found. */
  bwrapPath: string | undefined;
  /** The gateway runs as root: commands drop to `tools.exec.sandboxUser` uids inside the sandbox. */
  hostIsRoot: boolean;
}

/** Whether `exec` is offered, and why not (for `/readyz`, `doctor` and the start-up log). */
export type ExecStatus = { available: true; sandbox: 'bwrap' | 'none' } | { available: false; sandbox: 'bwrap'; reason: string; detail?: string };

/** The outcome of {@link prepareExec}. */
export interface ExecSetup {
  /** The tool, when the sandbox works (or `sandbox: "none"` was chosen). */
  tool?: AnyTool;
  /** The group the file tools give what they create, so sandboxed commands (other uids of it) can change it; set when commands drop to `tools.exec.sandboxUser`. */
  sandboxGroup?: number;
  status: ExecStatus;
}

/** The sandbox runner's options from `tools.exec` and the host facts. */
export function runnerOptions(
  exec: ExecConfig,
  host: ExecHost,
  system: SandboxRunOptions['system'],
): Omit<SandboxRunOptions, 'workspace' | 'network' | 'limits'> {
  const { first, last } = uidRange(exec);
  return {
    bwrapPath: host.bwrapPath ?? 'bwrap',
    path: host.path,
    system,
    hostIsRoot: host.hostIsRoot,
    ...(host.hostIsRoot ? { uids: new UidAllocator(first, last), gid: exec.sandboxUser.gid } : {}),
    outputBudget: exec.outputChars,
    progressIntervalMs: exec.progressInterval,
    killGraceMs: exec.killGrace,
  };
}

/** The explanation when bwrap is not on the PATH. */
export const BWRAP_MISSING =
  'bubblewrap (bwrap) was not found on the PATH: install the bubblewrap package (apt-get install bubblewrap), or set tools.exec.bwrapPath';

/**
 * Start-up step: the `exec` tool, when it can run. With `tools.exec.sandbox: "bwrap"` (the default)
 * the sandbox is probed by running `true` in it over a scratch workspace under the data dir; if bwrap
 * is missing or the probe fails, `exec` is not offered and the reason is logged (and shown by
 * `/readyz` and `doctor`). With `"none"` the start-up log says loudly that commands run unsandboxed,
 * and every call asks (the tool's own `sandbox` ask). Runs and their start are logged and audited
 * (command, exit code, duration; never the output).
 */
export async function prepareExec(
  cfg: Readonly<Config>,
  log: Logger,
  host: ExecHost,
  storage: Storage,
  deps: { scrub: (text: string) => string },
): Promise<ExecSetup> {
  const exec = cfg.tools.exec;
  const execLog = log.child({ component: 'exec' });
  let system: SandboxRunOptions['system'] = [];
  if (exec.sandbox === 'bwrap') {
    if (!host.bwrapPath) {
      execLog.warn({ reason: BWRAP_MISSING }, 'exec is not offered: the sandbox cannot start');
      return { status: { available: false, sandbox: 'bwrap', reason: BWRAP_MISSING } };
    }
    system = await describeSystemLayout();
    const probe = await probeSandbox({ ...runnerOptions(exec, host, system), limits: DEFAULT_SANDBOX_LIMITS, scratchDir: cfg.gateway.dataDir });
    if (!probe.ok) {
      execLog.warn({ reason: probe.reason, detail: probe.detail }, 'exec is not offered: the sandbox cannot start');
      return { status: { available: false, sandbox: 'bwrap', reason: probe.reason, detail: probe.detail } };
    }
  } else {
    execLog.warn(
      'tools.exec.sandbox is "none": exec runs commands UNSANDBOXED on this host, as the gateway\'s user; every exec call needs a person\'s approval',
    );
  }
  const agents = new Map(Object.entries(cfg.agents).map(([id, agent]) => [id, execSettingsOf(exec, agent.toolOptions.exec, DEFAULT_SANDBOX_LIMITS)]));
  const fallback = execSettingsOf(exec, undefined, DEFAULT_SANDBOX_LIMITS);
  const audit = (record: ExecRunRecord) => {
    const { command, ...rest } = record;
    const detail = { ...rest, command: deps.scrub(command) };
    storage.audit
      .append({ actor: 'gateway', action: 'exec.run', target: record.turnId, detail })
      .catch((err: unknown) => execLog.error({ err }, 'audit write failed'));
    execLog.info(
      {
        sessionId: record.sessionId,
        turnId: record.turnId,
        toolUseId: record.toolUseId,
        pid: record.pid,
        exitCode: record.exitCode,
        durationMs: record.durationMs,
      },
      'exec finished',
    );
  };
  const tool = createExecTool({
    checks: await loadExecChecks(),
    sandbox: exec.sandbox,
    runner: runnerOptions(exec, host, system),
    settingsFor: (agentId) => agents.get(agentId) ?? fallback,
    slots: new ExecRunQueue({ perGateway: exec.concurrency.gateway, perSession: exec.concurrency.session }),
    onSpawn: (info) => execLog.info(info, 'exec started'),
    onRun: audit,
  });
  execLog.info({ sandbox: exec.sandbox }, 'exec is offered');
  const sandboxGroup = exec.sandbox === 'bwrap' && host.hostIsRoot ? exec.sandboxUser.gid : undefined;
  return { tool: tool as AnyTool, status: { available: true, sandbox: exec.sandbox }, ...(sandboxGroup !== undefined ? { sandboxGroup } : {}) };
}

/**
 * The agent loop's time limit for `exec`: the longest `maxTimeout` of any agent plus the kill grace
 * and a margin (the command's own timeout stops it first), unless `limits.toolTimeouts.exec` is set.
 */
export function execLoopTimeout(cfg: Readonly<Config>): number {
  const exec = cfg.tools.exec;
  const longest = Math.max(
    execSettingsOf(exec, undefined, DEFAULT_SANDBOX_LIMITS).maxTimeoutMs,
    ...Object.values(cfg.agents).map((agent) => execSettingsOf(exec, agent.toolOptions.exec, DEFAULT_SANDBOX_LIMITS).maxTimeoutMs),
  );
  return longest + exec.killGrace + 10_000;
}
