import { SHELL_RC_FILES } from '@switchboard/agent';
/**
 * The bubblewrap command line for one sandboxed `bash -c` run, built as a pure function of resolved
 * options (no file system, no environment reads): see `docs/exec.md` ("Sandbox") for the layout.
 */

/** One top-level system entry (`/bin`, `/lib64`, …) as it exists on the host. */
export type SystemEntry = { path: string; kind: 'dir' } | { path: string; kind: 'symlink'; target: string };

/** Resource limits applied with `prlimit` inside the sandbox, before the uid drop. */
export interface SandboxLimits {
  /** CPU seconds (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address space in bytes (RLIMIT_AS). */
  addressSpaceBytes: number;
  /** Processes for the sandbox uid (RLIMIT_NPROC; enforced only for a non-root uid). */
  processes: number;
  /** Largest file the command may write, in bytes (RLIMIT_FSIZE). */
  fileSizeBytes: number;
  /** Open files (RLIMIT_NOFILE). */
  openFiles: number;
}

/** Defaults for {@link SandboxLimits}. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  cpuSeconds: 60,
  addressSpaceBytes: 4 * 1024 * 1024 * 1024,
  processes: 256,
  fileSizeBytes: 1024 * 1024 * 1024,
  openFiles: 1024,
};

/** Size of the private `/tmp` tmpfs (bytes) unless configured. */
export const DEFAULT_TMP_BYTES = 256 * 1024 * 1024;

/** Files and folders under `/etc` bound read-only when they exist (`--ro-bind-try`). */
export const ETC_SAFE_SUBSET: readonly string[] = [
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/localtime',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/protocols',
  '/etc/services',
  '/etc/mime.types',
  '/etc/magic',
  '/etc/inputrc',
  '/etc/os-release',
  '/etc/debian_version',
];

/** Workspace entries re-bound read-only over the read-write workspace (relative paths). */
export const PROTECTED_DIRS: readonly string[] = ['.git/hooks', '.switchboard'];
/** Protected files (relative paths); `AGENTS.md` and the rc files are created empty when missing. */
export const PROTECTED_FILES: readonly string[] = ['AGENTS.md', '.git/config', ...SHELL_RC_FILES];

/** Everything {@link buildBwrapArgs} needs, already resolved by the caller. */
export interface BwrapArgsOptions {
  /** Absolute, symlink-free workspace path; bound read-write at the same path and used as the cwd. */
  workspace: string;
  /** `PATH` inside the sandbox (resolved once by the CLI). */
  path: string;
  /** `HOME` inside the sandbox; must be inside the workspace. Default: the workspace. */
  home?: string;
  /** `LANG` inside the sandbox. Default `C.UTF-8`. */
  lang?: string;
  /** Top-level system entries that exist on the host (see `describeSystemLayout`). `/usr` must be one. */
  system: readonly SystemEntry[];
  /** `/etc` entries to bind read-only if present. Default {@link ETC_SAFE_SUBSET}. */
  etc?: readonly string[];
  /** Absolute paths inside the workspace to re-bind read-only (they must exist; see `prepareProtectedPaths`). */
  readOnly: readonly string[];
  /**
   * Absolute folders inside the workspace bound read-write onto themselves before the read-only
   * entries (e.g. `.git`): a mount point cannot be renamed or removed (EBUSY), so a command cannot
   * swap `.git` for a copy with writable hooks. Default none.
   */
  pinned?: readonly string[];
  /** Keep the host network (no `--unshare-net`) and bind `/etc/resolv.conf`. Default false. */
  network?: boolean;
  /** When set, drop to this uid inside with `setpriv` (required when bwrap runs as root). */
  uid?: number;
  /** The group to drop to with `uid` (the shared sandbox group owning workspace files). Default: `uid`. */
  gid?: number;
  /** Resource limits (applied with `prlimit`). */
  limits: SandboxLimits;
  /** Size of the private `/tmp`. Default {@link DEFAULT_TMP_BYTES}. */
  tmpBytes?: number;
  /** bwrap is started by a non-root uid: add `--unshare-user` (there is no uid to drop to then). */
  unprivileged?: boolean;
  /** Absolute path of `prlimit` inside the sandbox. Default `/usr/bin/prlimit`. */
  prlimitPath?: string;
  /** Absolute path of `setpriv` inside the sandbox. Default `/usr/bin/setpriv`. */
  setprivPath?: string;
  /** Absolute path of `bash` inside the sandbox. Default `/usr/bin/bash`. */
  bashPath?: string;
  /** Merge the command's stderr into its stdout (one pipe, arrival order) before it starts. Default false. */
  mergeStderr?: boolean;
}

/**
 * The wrapper script run by `bash -c` before the command itself (`exec "$@"` then runs
 * `bash -c command`): `umask 0002` so files a run creates stay writable by the sandbox group (the
 * next run has another uid of that group), and, with `mergeStderr`, `exec 2>&1`.
 */
export function sandboxPrelude(mergeStderr: boolean): string {
  return mergeStderr ? 'umask 0002; exec 2>&1; exec "$@"' : 'umask 0002; exec "$@"';
}

/** Every parent of an absolute path, outermost first, excluding `/` and the path itself. */
export function parentDirs(absolute: string): string[] {
  const parts = absolute.split('/').filter((p) => p.length > 0);
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(`/${parts.slice(0, i).join('/')}`);
  return out;
}

function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

/** The environment bwrap itself is spawned with (never the gateway's): the same four variables. */
export function sandboxEnv(options: Pick<BwrapArgsOptions, 'workspace' | 'path' | 'home' | 'lang'>): {
  PATH: string;
  HOME: string;
  LANG: string;
  TERM: string;
} {
  return { PATH: options.path, HOME: options.home ?? options.workspace, LANG: options.lang ?? 'C.UTF-8', TERM: 'dumb' };
}

/**
 * The argv (without the bwrap binary itself) that runs `bash -c command` in the sandbox: system
 * folders read-only, the workspace read-write with its protected entries read-only on top, a
 * private `/tmp`, `/proc` and minimal `/dev`, new pid/ipc/uts/net namespaces, a scrubbed
 * environment, then `prlimit` and (when `uid` is set) `setpriv`, then a `bash -c` prelude
 * ({@link sandboxPrelude}: umask 0002, stderr merged when `mergeStderr`) that execs `bash -c command`.
 * The result is the complete argv that runs (the caller adds only bwrap's own fd options in front).
 */
export function buildBwrapArgs(options: BwrapArgsOptions, command: string): string[] {
  const ws = options.workspace;
  if (!ws.startsWith('/') || ws === '/') throw new Error(`sandbox workspace must be an absolute path below /: ${ws}`);
  const env = sandboxEnv(options);
  if (!isInside(ws, env.HOME)) throw new Error(`sandbox HOME must be inside the workspace: ${env.HOME}`);
  const args: string[] = [];
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!options.network) args.push('--unshare-net');
  if (options.unprivileged) args.push('--unshare-user');
  args.push('--die-with-parent', '--new-session', '--clearenv');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);

  if (!options.system.some((e) => e.path === '/usr' && e.kind === 'dir')) throw new Error('sandbox system layout has no /usr directory');
  for (const entry of options.system) {
    if (entry.kind === 'dir') args.push('--ro-bind', entry.path, entry.path);
    else args.push('--symlink', entry.target, entry.path);
  }
  for (const etc of options.etc ?? ETC_SAFE_SUBSET) args.push('--ro-bind-try', etc, etc);
  if (options.network) args.push('--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf');

  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--perms', '1777', '--size', String(options.tmpBytes ?? DEFAULT_TMP_BYTES), '--tmpfs', '/tmp');

  // The workspace's parents are created empty inside (never bound: the host data dir stays out).
  for (const dir of parentDirs(ws)) {
    if (dir === '/tmp') continue; // already the private tmpfs
    args.push('--perms', '0755', '--dir', dir);
  }
  args.push('--bind', ws, ws);
  for (const pin of options.pinned ?? []) {
    if (!isInside(ws, pin) || pin === ws) throw new Error(`pinned path must be inside the workspace: ${pin}`);
    args.push('--bind', pin, pin);
  }
  for (const ro of options.readOnly) {
    if (!isInside(ws, ro) || ro === ws) throw new Error(`read-only path must be inside the workspace: ${ro}`);
    args.push('--ro-bind', ro, ro);
  }
  args.push('--chdir', ws);

  const l = options.limits;
  args.push(
    '--',
    options.prlimitPath ?? '/usr/bin/prlimit',
    `--cpu=${l.cpuSeconds}`,
    `--as=${l.addressSpaceBytes}`,
    `--nproc=${l.processes}`,
    `--fsize=${l.fileSizeBytes}`,
    `--nofile=${l.openFiles}`,
  );
  if (options.uid !== undefined) {
    const gid = String(options.gid ?? options.uid);
    args.push(
      options.setprivPath ?? '/usr/bin/setpriv',
      `--reuid=${options.uid}`,
      `--regid=${gid}`,
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
    );
  }
  const bash = options.bashPath ?? '/usr/bin/bash';
  args.push(bash, '-c', sandboxPrelude(options.mergeStderr ?? false), 'sandbox', bash, '-c', command);
  return args;
}
