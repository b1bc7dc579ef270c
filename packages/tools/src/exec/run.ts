/**
 * Runs one command in the bubblewrap sandbox: bwrap in its own process group with a scrubbed
 * environment, stdout and stderr merged on one pipe (arrival order), output cut to a budget (head
 * and tail kept), progress at an interval, and the whole group killed on abort or timeout.
 */
import { spawn } from 'node:child_process';
import { type BwrapArgsOptions, buildBwrapArgs, sandboxEnv } from './bwrap-args.js';
import { abortedBeforeStart, collectRun } from './run-collect.js';
export { DEFAULT_OUTPUT_BUDGET, DEFAULT_PROGRESS_INTERVAL_MS, MIN_PROGRESS_INTERVAL_MS } from './run-collect.js';
import { prepareProtectedPaths, prepareWorkspaceForSandbox, type UidAllocator } from './layout.js';
import { childPids, reapNamespace, signalPid } from './proc.js';

/** Default grace between SIGTERM and SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 2_000;

/** Resolved sandbox options for {@link runSandboxed} (no defaults read from the environment). */
export interface SandboxRunOptions extends Omit<BwrapArgsOptions, 'readOnly' | 'pinned' | 'uid' | 'unprivileged'> {
  /** Absolute path of the bwrap binary (resolved once by the CLI). */
  bwrapPath: string;
  /** The gateway runs as root: drop to a uid from `uids` inside the sandbox (required then). */
  hostIsRoot: boolean;
  /** One uid per concurrent run (required when `hostIsRoot`). */
  uids?: UidAllocator;
  /** Output budget in characters. Default {@link DEFAULT_OUTPUT_BUDGET}. */
  outputBudget?: number;
  /** Progress interval. Default {@link DEFAULT_PROGRESS_INTERVAL_MS} (at least {@link MIN_PROGRESS_INTERVAL_MS}). */
  progressIntervalMs?: number;
  /** Grace between SIGTERM and SIGKILL of the process group. Default {@link DEFAULT_KILL_GRACE_MS}. */
  killGraceMs?: number;
  /**
   * The sandbox group every uid of `uids` runs in (with `hostIsRoot`). When set, the workspace
   * root is given this group (g+rwx, setgid; see `prepareWorkspaceForSandbox`) before each run.
   * Default: the run's uid (then the workspace is left as it is).
   */
  gid?: number;
}

/** A progress report while the command runs. */
export interface SandboxProgress {
  lines: number;
  elapsedMs: number;
}

/** Per-call controls. */
export interface SandboxCallOptions {
  signal?: AbortSignal;
  /** Wall-clock limit; the group is killed when it passes. */
  timeoutMs?: number;
  onProgress?: (progress: SandboxProgress) => void;
  /** Called with each piece of output as it arrives (before any cut to the budget). */
  onOutput?: (text: string) => void;
  /** Called once bwrap is spawned, with its pid (the process group id). */
  onSpawn?: (pid: number) => void;
}

/** What one run produced. */
export interface SandboxResult {
  /** The command's exit status (bwrap passes it through); null when killed by a signal. */
  exitCode: number | null;
  /** The signal that ended bwrap, if any. */
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved in arrival order, cut to the budget. */
  output: string;
  truncated: boolean;
  durationMs: number;
  timedOut: boolean;
  aborted: boolean;
  /** The uid the command ran as (undefined when not dropped). */
  uid?: number;
}

/** Thrown when every sandbox uid is in use (the caller queues runs below this limit). */
export class SandboxBusyError extends Error {
  constructor() {
    super('no free sandbox uid: every uid of tools.exec.sandboxUids is in use');
    this.name = 'SandboxBusyError';
  }
}

/**
 * Stops a run: SIGTERM to the command (the child of the sandbox's pid-1 reaper), or to bwrap's
 * process group while the reaper is not known yet; after the grace SIGKILL to the reaper (the
 * kernel then kills every process in the pid namespace) and to bwrap's group.
 */
function stopRun(bwrapPid: number, reaper: () => number | undefined, graceMs: number): NodeJS.Timeout {
  const known = reaper() ?? childPids(bwrapPid)[0];
  if (known === undefined) signalPid(-bwrapPid, 'SIGTERM');
  else for (const command of childPids(known)) signalPid(command, 'SIGTERM');
  return setTimeout(() => {
    const current = reaper() ?? childPids(bwrapPid)[0];
    if (current !== undefined) signalPid(current, 'SIGKILL');
    signalPid(-bwrapPid, 'SIGKILL');
  }, graceMs);
}

/** Runs `command` with `bash -c` in the sandbox and resolves when bwrap has exited. */
export async function runSandboxed(options: SandboxRunOptions, command: string, call: SandboxCallOptions = {}): Promise<SandboxResult> {
  let uid: number | undefined;
  if (options.hostIsRoot) {
    if (!options.uids) throw new Error('the gateway runs as root: sandbox uids (tools.exec.sandboxUids) are required');
    uid = options.uids.acquire();
    if (uid === undefined) throw new SandboxBusyError();
  }
  try {
    // The shared sandbox group owns the workspace root (g+rwx, setgid) before every run.
    if (uid !== undefined && options.gid !== undefined) await prepareWorkspaceForSandbox(options.workspace, options.gid);
    const { readOnly, pinned } = await prepareProtectedPaths(options.workspace);
    // fd 3 carries bwrap's JSON status ({ "child-pid": <the reaper's host pid> }).
    const argv = [
      '--json-status-fd',
      '3',
      ...buildBwrapArgs({ ...options, readOnly, pinned, uid, unprivileged: !options.hostIsRoot, mergeStderr: true }, command),
    ];
    const result = await spawnAndCollect(options, argv, call);
    return uid === undefined ? result : { ...result, uid };
  } finally {
    if (uid !== undefined) options.uids?.release(uid);
  }
}

function spawnAndCollect(options: SandboxRunOptions, argv: string[], call: SandboxCallOptions): Promise<SandboxResult> {
  if (call.signal?.aborted) return Promise.resolve(abortedBeforeStart());
  const child = spawn(options.bwrapPath, argv, { detached: true, env: sandboxEnv(options), cwd: '/', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  let reaper: number | undefined;
  let status = '';
  child.stdio[3]?.on('data', (chunk: Buffer) => {
    status += chunk.toString('utf8');
    const match = /"child-pid"\s*:\s*(\d+)/.exec(status);
    if (match && reaper === undefined) reaper = Number(match[1]);
  });
  let killTimer: NodeJS.Timeout | undefined;
  return collectRun(child, options, call, {
    stop: () => {
      if (child.pid !== undefined) killTimer = stopRun(child.pid, () => reaper, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    },
    // bwrap exits as soon as the command does; background processes left in the pid namespace
    // are killed (through the reaper) and awaited here, so none outlives the call.
    settle: async () => {
      if (killTimer) clearTimeout(killTimer);
      if (child.pid !== undefined) signalPid(-child.pid, 'SIGKILL');
      const gone = reaper === undefined ? true : await reapNamespace(reaper);
      return gone ? undefined : `sandbox reaper ${reaper} still alive after SIGKILL`;
    },
  });
}
