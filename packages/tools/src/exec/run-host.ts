/**
 * Runs one command on the host, without a sandbox (`tools.exec.sandbox: "none"`, chosen explicitly
 * by the operator; every such call is approved by a person first). Same contract as the sandboxed
 * runner: `bash -c` in its own process group with the scrubbed environment, stdout and stderr on
 * one pipe in arrival order, output cut to the budget, progress, and the whole group killed on abort
 * or timeout.
 */
import { spawn } from 'node:child_process';
import { sandboxEnv } from './bwrap-args.js';
import { killGroup, signalPid } from './proc.js';
import { abortedBeforeStart, collectRun } from './run-collect.js';
import { DEFAULT_KILL_GRACE_MS, type SandboxCallOptions, type SandboxResult } from './run.js';

/** What a host run needs (resolved by the caller). */
export interface HostRunOptions {
  /** Absolute workspace path: the working directory and `HOME`. */
  workspace: string;
  /** `PATH` of the command. */
  path: string;
  /** Absolute path of bash. Default `/usr/bin/bash`. */
  bashPath?: string;
  outputBudget?: number;
  progressIntervalMs?: number;
  killGraceMs?: number;
}

/** Runs `command` with `bash -c` on the host and resolves when its process group is done. */
export function runOnHost(options: HostRunOptions, command: string, call: SandboxCallOptions = {}): Promise<SandboxResult> {
  if (call.signal?.aborted) return Promise.resolve(abortedBeforeStart());
  const bash = options.bashPath ?? '/usr/bin/bash';
  const child = spawn(bash, ['-c', 'exec 2>&1; exec "$0" -c "$1"', bash, command], {
    detached: true,
    env: sandboxEnv({ workspace: options.workspace, path: options.path }),
    cwd: options.workspace,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let killTimer: NodeJS.Timeout | undefined;
  return collectRun(child, options, call, {
    stop: () => {
      const pid = child.pid;
      if (pid === undefined) return;
      signalPid(-pid, 'SIGTERM');
      killTimer = setTimeout(() => signalPid(-pid, 'SIGKILL'), options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    },
    // Background processes the command left in its group do not outlive the call.
    settle: async () => {
      if (killTimer) clearTimeout(killTimer);
      if (child.pid === undefined) return undefined;
      return (await killGroup(child.pid)) ? undefined : `process group ${child.pid} still alive after SIGKILL`;
    },
  });
}
