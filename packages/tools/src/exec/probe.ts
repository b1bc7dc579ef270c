/**
 * Checks that the sandbox can start on this host (for `doctor` and `/readyz`): runs `true` in a
 * real sandbox over a scratch workspace and says why not when it fails.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { type SandboxRunOptions, runSandboxed } from './run.js';

/** The probe's verdict. */
export type SandboxProbe = { ok: true } | { ok: false; reason: string; detail: string };

/** Options: the run options (any workspace is replaced) plus a folder for the scratch workspace. */
export interface ProbeOptions extends Omit<SandboxRunOptions, 'workspace'> {
  /** Existing folder the probe creates (and removes) its scratch workspace in. */
  scratchDir: string;
  /** Upper bound for the probe run. Default 10 s. */
  timeoutMs?: number;
}

/** Maps bwrap's error text to a reason an operator can act on. */
export function explainSandboxFailure(detail: string): string {
  if (/No permissions to create new namespace|Creating new namespace failed|unshare.*Operation not permitted|setting up uid map/i.test(detail)) {
    return 'bubblewrap cannot create namespaces: user namespaces are refused (Docker: seccomp/AppArmor profile; sysctl kernel.unprivileged_userns_clone or user.max_user_namespaces)';
  }
  if (/Can't mount proc|mount.*Operation not permitted|Failed to make \/ slave/i.test(detail))
    return 'bubblewrap cannot mount (missing CAP_SYS_ADMIN or a seccomp profile blocks mount)';
  if (/setpriv|setresuid|setresgid/i.test(detail))
    return 'cannot drop to the sandbox uid with setpriv (util-linux setpriv missing or the uid range is not usable)';
  if (/prlimit/i.test(detail)) return 'prlimit (util-linux) is missing or refused the limits';
  return 'bubblewrap failed to run a trivial command';
}

/** Runs `true` in the sandbox; `{ ok: true }` when it exits 0. Never throws. */
export async function probeSandbox(options: ProbeOptions): Promise<SandboxProbe> {
  let workspace: string | undefined;
  try {
    workspace = await mkdtemp(path.join(options.scratchDir, 'sandbox-probe-'));
    const result = await runSandboxed({ ...options, workspace }, 'true', { timeoutMs: options.timeoutMs ?? 10_000 });
    if (result.exitCode === 0) return { ok: true };
    const detail = result.output.trim().slice(0, 2000) || `exit ${result.exitCode ?? result.signal}`;
    return { ok: false, reason: result.timedOut ? 'the sandbox probe timed out' : explainSandboxFailure(detail), detail };
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    const detail = error instanceof Error ? error.message : String(error);
    if (code === 'ENOENT') return { ok: false, reason: `bubblewrap not found at ${options.bwrapPath} (install the bubblewrap package)`, detail };
    if (code === 'EACCES') return { ok: false, reason: `bubblewrap at ${options.bwrapPath} is not executable`, detail };
    return { ok: false, reason: 'the sandbox could not be prepared', detail };
  } finally {
    if (workspace) await rm(workspace, { recursive: true, force: true }).catch(() => undefined);
  }
}
