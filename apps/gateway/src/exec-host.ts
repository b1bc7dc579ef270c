import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { ExecConfig } from './config-tools.js';
import type { ExecHost } from './wiring/exec.js';

/** The folders the sandbox mirrors from the host (docs/exec.md): only PATH entries below them work inside. */
const SANDBOX_PREFIXES = ['/usr/', '/bin', '/sbin'];
const DEFAULT_SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Resolves, once, what `exec` needs from the host (called by the CLI with its own PATH): the
 * sandbox's PATH (the CLI's entries under `/usr`, `/bin`, `/sbin`, else a default), the bwrap binary
 * (`tools.exec.bwrapPath`, else `bwrap` on the PATH) and whether the gateway runs as root.
 */
export function resolveExecHost(exec: ExecConfig, envPath: string | undefined, uid: number | undefined): ExecHost {
  const entries = (envPath ?? '').split(':').filter((dir) => isAbsolute(dir));
  const inside = entries.filter((dir) => SANDBOX_PREFIXES.some((prefix) => dir === prefix.replace(/\/$/, '') || dir.startsWith(prefix)));
  let bwrapPath: string | undefined;
  if (exec.bwrapPath) bwrapPath = executable(exec.bwrapPath) ? exec.bwrapPath : undefined;
  else bwrapPath = entries.map((dir) => join(dir, 'bwrap')).find(executable);
  return { path: inside.length > 0 ? [...new Set(inside)].join(':') : DEFAULT_SANDBOX_PATH, bwrapPath, hostIsRoot: uid === 0 };
}
