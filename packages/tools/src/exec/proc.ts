/** Small Linux `/proc` readers the runner uses to find and reap the sandbox's processes. */
import { readdirSync, readFileSync } from 'node:fs';

/** Direct children of a process (`/proc/<pid>/task/<pid>/children`); empty when unknown. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(/\s+/)
      .filter((p) => p.length > 0)
      .map(Number);
  } catch {
    return [];
  }
}

/** A process's command name and state letter (`R`, `S`, `Z`, …), or undefined when it is gone. */
export function processState(pid: number): { comm: string; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    if (open === -1 || close === -1) return undefined;
    return { comm: stat.slice(open + 1, close), state: stat.slice(close + 2, close + 3) };
  } catch {
    return undefined;
  }
}

/** Whether a pid names a live process (not gone, not a zombie) with the given command name. */
export function isLive(pid: number, comm: string): boolean {
  const state = processState(pid);
  return state !== undefined && state.comm === comm && state.state !== 'Z' && state.state !== 'X';
}

/** Sends a signal, ignoring a process that is already gone. */
export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Kills a sandbox's pid-1 reaper (the kernel then kills every process in its pid namespace) and
 * resolves once it is gone or a zombie, so no sandboxed process outlives the run. Checks every
 * `stepMs` for at most `boundMs`; resolves false if the reaper was still alive then.
 */
export async function reapNamespace(reaper: number, boundMs = 5_000, stepMs = 10): Promise<boolean> {
  if (!isLive(reaper, 'bwrap')) return true;
  signalPid(reaper, 'SIGKILL');
  const deadline = Date.now() + boundMs;
  while (isLive(reaper, 'bwrap')) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  return true;
}

/** Live (not zombie) processes whose process group is `pgid`, read from `/proc/<pid>/stat`. */
export function liveGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/u.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name: state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') out.push(Number(name));
    } catch {
      // The process exited while we looked.
    }
  }
  return out;
}

/** Kills a process group and resolves once none of it is alive (checks every `stepMs` for at most `boundMs`); false if some survived. */
export async function killGroup(pgid: number, boundMs = 5_000, stepMs = 10): Promise<boolean> {
  signalPid(-pgid, 'SIGKILL');
  const deadline = Date.now() + boundMs;
  while (liveGroupMembers(pgid).length > 0) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  return true;
}
