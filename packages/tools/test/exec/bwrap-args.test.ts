import { describe, expect, it } from 'vitest';
import { buildBwrapArgs, type BwrapArgsOptions, DEFAULT_SANDBOX_LIMITS, parentDirs, sandboxEnv, sandboxPrelude } from '../../src/index.js';

const base: BwrapArgsOptions = {
  workspace: '/srv/data/workspaces/w1',
  path: '/usr/bin:/bin',
  system: [
    { path: '/usr', kind: 'dir' },
    { path: '/bin', kind: 'symlink', target: 'usr/bin' },
    { path: '/lib', kind: 'symlink', target: 'usr/lib' },
    { path: '/lib64', kind: 'dir' },
  ],
  readOnly: ['/srv/data/workspaces/w1/.git/hooks', '/srv/data/workspaces/w1/AGENTS.md'],
  limits: { ...DEFAULT_SANDBOX_LIMITS, cpuSeconds: 7, addressSpaceBytes: 1000, processes: 12, fileSizeBytes: 3000, openFiles: 64 },
  uid: 64001,
  gid: 64000,
};

/** Index of the first occurrence of `seq` as consecutive elements, or -1. */
function indexOfSeq(args: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= args.length; i++) if (seq.every((s, j) => args[i + j] === s)) return i;
  return -1;
}

describe('buildBwrapArgs', () => {
  const args = buildBwrapArgs(base, 'echo hi && ls');
  const dash = args.indexOf('--');

  it('isolates pid, ipc, uts and the network, dies with its parent, starts a new session and clears the env', () => {
    for (const flag of ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session', '--clearenv']) {
      expect(args.indexOf(flag), flag).toBeGreaterThanOrEqual(0);
      expect(args.indexOf(flag), flag).toBeLessThan(dash);
    }
    expect(args).not.toContain('--unshare-user');
    expect(args).not.toContain('--share-net');
  });

  it('keeps the network only when allowed, and then binds resolv.conf', () => {
    const open = buildBwrapArgs({ ...base, network: true }, 'true');
    expect(open).not.toContain('--unshare-net');
    expect(indexOfSeq(open, '--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf')).toBe(-1);
  });

  it('sets exactly PATH, HOME, LANG and TERM=dumb, and the spawn env is the same four', () => {
    const set: string[] = [];
    args.forEach((a, i) => {
      if (a === '--setenv') set.push(`${args[i + 1]}=${args[i + 2]}`);
    });
    expect(set).toEqual(['PATH=/usr/bin:/bin', 'HOME=/srv/data/workspaces/w1', 'LANG=C.UTF-8', 'TERM=dumb']);
    expect(sandboxEnv(base)).toEqual({ PATH: '/usr/bin:/bin', HOME: '/srv/data/workspaces/w1', LANG: 'C.UTF-8', TERM: 'dumb' });
  });

  it('binds system dirs read-only, recreates symlinks, binds a safe /etc subset and never the root', () => {
    expect(indexOfSeq(args, '--ro-bind', '/usr', '/usr')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--ro-bind', '/lib64', '/lib64')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--symlink', 'usr/bin', '/bin')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--ro-bind-try', '/etc/passwd', '/etc/passwd')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--ro-bind-try', '/etc/ssl', '/etc/ssl')).toBeGreaterThan(0);
    expect(args).not.toContain('/etc/shadow');
    expect(indexOfSeq(args, '--bind', '/', '/')).toBe(-1);
    expect(indexOfSeq(args, '--ro-bind', '/', '/')).toBe(-1);
    expect(indexOfSeq(args, '--ro-bind-try', '/etc', '/etc')).toBe(-1);
  });

  it('gives a private /proc, minimal /dev and a 1777 size-capped /tmp', () => {
    expect(indexOfSeq(args, '--proc', '/proc')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--dev', '/dev')).toBeGreaterThan(0);
    expect(indexOfSeq(args, '--perms', '1777', '--size', String(256 * 1024 * 1024), '--tmpfs', '/tmp')).toBeGreaterThan(0);
  });

  it('creates the workspace parents 0755 (never binding the data dir), binds the workspace, then the read-only entries on top', () => {
    const srv = indexOfSeq(args, '--perms', '0755', '--dir', '/srv');
    const data = indexOfSeq(args, '--perms', '0755', '--dir', '/srv/data');
    const wsParent = indexOfSeq(args, '--perms', '0755', '--dir', '/srv/data/workspaces');
    const ws = indexOfSeq(args, '--bind', base.workspace, base.workspace);
    const hooks = indexOfSeq(args, '--ro-bind', `${base.workspace}/.git/hooks`, `${base.workspace}/.git/hooks`);
    const agents = indexOfSeq(args, '--ro-bind', `${base.workspace}/AGENTS.md`, `${base.workspace}/AGENTS.md`);
    expect(srv).toBeGreaterThan(0);
    expect(srv).toBeLessThan(data);
    expect(data).toBeLessThan(wsParent);
    expect(wsParent).toBeLessThan(ws);
    expect(ws).toBeLessThan(hooks);
    expect(ws).toBeLessThan(agents);
    expect(args.filter((a) => a === '/srv/data').length).toBe(1);
    expect(indexOfSeq(args, '--chdir', base.workspace)).toBeGreaterThan(agents);
  });

  it('pins .git read-write onto itself after the workspace and before the read-only entries', () => {
    const pinned = buildBwrapArgs({ ...base, pinned: [`${base.workspace}/.git`] }, 'true');
    const ws = indexOfSeq(pinned, '--bind', base.workspace, base.workspace);
    const pin = indexOfSeq(pinned, '--bind', `${base.workspace}/.git`, `${base.workspace}/.git`);
    const hooks = indexOfSeq(pinned, '--ro-bind', `${base.workspace}/.git/hooks`, `${base.workspace}/.git/hooks`);
    expect(ws).toBeLessThan(pin);
    expect(pin).toBeLessThan(hooks);
    expect(() => buildBwrapArgs({ ...base, pinned: ['/etc'] }, 'true')).toThrow(/inside the workspace/);
  });

  it('runs prlimit, then setpriv to the sandbox uid, then the umask prelude, then bash -c with the command, after --', () => {
    expect(args.slice(dash + 1)).toEqual([
      '/usr/bin/prlimit',
      '--cpu=7',
      '--as=1000',
      '--nproc=12',
      '--fsize=3000',
      '--nofile=64',
      '/usr/bin/setpriv',
      '--reuid=64001',
      '--regid=64000',
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '/usr/bin/bash',
      '-c',
      'umask 0002; exec "$@"',
      'sandbox',
      '/usr/bin/bash',
      '-c',
      'echo hi && ls',
    ]);
  });

  it('with mergeStderr the prelude sends stderr to stdout before exec-ing the command (the argv runSandboxed spawns)', () => {
    const merged = buildBwrapArgs({ ...base, mergeStderr: true }, 'echo hi >&2');
    expect(merged.slice(-7)).toEqual(['/usr/bin/bash', '-c', 'umask 0002; exec 2>&1; exec "$@"', 'sandbox', '/usr/bin/bash', '-c', 'echo hi >&2']);
    expect(sandboxPrelude(true).indexOf('umask 0002')).toBeLessThan(sandboxPrelude(true).indexOf('exec'));
  });

  it('without a uid (unprivileged gateway) uses a user namespace and no setpriv', () => {
    const unpriv = buildBwrapArgs({ ...base, uid: undefined, unprivileged: true }, 'true');
    expect(unpriv).toContain('--unshare-user');
    expect(unpriv).not.toContain('/usr/bin/setpriv');
  });

  it('refuses a relative or root workspace, HOME outside it, read-only paths outside it and a layout without /usr', () => {
    expect(() => buildBwrapArgs({ ...base, workspace: 'ws' }, 'true')).toThrow(/absolute/);
    expect(() => buildBwrapArgs({ ...base, workspace: '/' }, 'true')).toThrow(/absolute/);
    expect(() => buildBwrapArgs({ ...base, home: '/root' }, 'true')).toThrow(/HOME/);
    expect(() => buildBwrapArgs({ ...base, readOnly: ['/srv/data/workspaces/w10/x'] }, 'true')).toThrow(/inside the workspace/);
    expect(() => buildBwrapArgs({ ...base, system: [{ path: '/bin', kind: 'dir' }] }, 'true')).toThrow(/\/usr/);
  });

  it('parentDirs lists the parents outermost first', () => {
    expect(parentDirs('/a/b/c')).toEqual(['/a', '/a/b']);
    expect(parentDirs('/a')).toEqual([]);
  });
});
