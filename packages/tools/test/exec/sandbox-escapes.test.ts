/**
 * Issue 14, acceptance 2 against the runner: escapes that must fail inside the real bubblewrap
 * sandbox (run as root here, dropping to a test uid). Every process is bounded by the sandbox's
 * pid namespace, its limits and a per-call timeout.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grantSandboxGroup, prepareProtectedPaths, runSandboxed } from '../../src/index.js';
import { alive, makeHost, pidsOfUid, runOptions, TEST_GID, TEST_UID_FIRST } from './helpers.js';

const CANARY = 'SWB_SANDBOX_CANARY_7f3a9c';
const BOUND = { timeoutMs: 30_000 };

describe('the bubblewrap sandbox (acceptance 2)', () => {
  beforeEach(() => {
    process.env.SWB_TEST_SECRET = CANARY;
  });
  afterEach(() => {
    delete process.env.SWB_TEST_SECRET;
  });

  it('runs the command as the dropped uid and the sandbox group, in the workspace', async () => {
    const host = await makeHost();
    const result = await runSandboxed(await runOptions(host), 'id -u; id -g; id -G; pwd; echo $HOME', BOUND);
    expect(result.exitCode).toBe(0);
    expect(result.uid).toBe(TEST_UID_FIRST);
    expect(result.output.trim().split('\n')).toEqual([String(TEST_UID_FIRST), String(TEST_GID), String(TEST_GID), host.workspace, host.workspace]);
  });

  it('cannot read the gateway database or config outside the workspace', async () => {
    const host = await makeHost();
    const result = await runSandboxed(await runOptions(host), `ls -a ${host.dataDir}; cat ${host.database}; cat ${host.config}`, BOUND);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('No such file or directory');
    expect(result.output).not.toContain('SQLITE-CANARY');
    expect(result.output).not.toContain('CONFIG-CANARY');
    // The data dir inside is an empty shell holding only the path to the workspace.
    expect(result.output).toMatch(/^\.\n\.\.\nworkspaces$/m);
  });

  it('cannot write outside the workspace (data dir, /usr, /etc) and /tmp is private', async () => {
    const host = await makeHost();
    const evil = path.join(host.dataDir, 'evil');
    const tmpMarker = `/tmp/sb-exec-escape-${process.pid}`;
    const cmd = `echo x > ${evil}; echo x > /usr/evil; echo x > /etc/evil; echo x > ${tmpMarker} && echo tmp-ok; echo ok > inside.txt`;
    const result = await runSandboxed(await runOptions(host), cmd, BOUND);
    expect(result.output).toMatch(/evil: Permission denied|evil: Read-only file system/);
    expect(result.output).toContain('/usr/evil: Read-only file system');
    expect(result.output).toContain('tmp-ok');
    expect(existsSync(evil)).toBe(false);
    expect(existsSync('/usr/evil')).toBe(false);
    expect(existsSync('/etc/evil')).toBe(false);
    expect(existsSync(tmpMarker)).toBe(false);
    expect(readFileSync(path.join(host.workspace, 'inside.txt'), 'utf8')).toBe('ok\n');
  });

  it('cannot write into .git/hooks, .git/config, .switchboard, AGENTS.md or rc files (created empty when missing)', async () => {
    const host = await makeHost();
    mkdirSync(path.join(host.workspace, '.git'));
    writeFileSync(path.join(host.workspace, '.git', 'config'), '[core]\n');
    // Make every protected entry group-writable first, so only the read-only mount can stop the writes.
    for (const entry of (await prepareProtectedPaths(host.workspace)).readOnly) await grantSandboxGroup(entry, TEST_GID);
    await grantSandboxGroup(path.join(host.workspace, '.git'), TEST_GID);
    const cmd = [
      'echo evil > .git/hooks/pre-commit',
      'echo evil >> .git/config',
      'echo evil > .switchboard/x',
      'echo evil >> AGENTS.md',
      'echo evil >> .bashrc',
      'mkdir -p .git/objects && echo obj > .git/objects/ok && echo objects-ok',
    ].join('; ');
    const result = await runSandboxed(await runOptions(host), cmd, BOUND);
    expect(result.output.match(/Read-only file system/g)?.length).toBe(5);
    expect(result.output).toContain('objects-ok');
    expect(existsSync(path.join(host.workspace, '.git/hooks/pre-commit'))).toBe(false);
    expect(readFileSync(path.join(host.workspace, '.git/config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(path.join(host.workspace, 'AGENTS.md'), 'utf8')).toBe('');
    expect(readFileSync(path.join(host.workspace, '.bashrc'), 'utf8')).toBe('');
    expect(existsSync(path.join(host.workspace, '.switchboard/x'))).toBe(false);
  });

  it('cannot swap .git for a copy with writable hooks (the pinned .git cannot be renamed or removed)', async () => {
    const host = await makeHost();
    mkdirSync(path.join(host.workspace, '.git', 'objects'), { recursive: true });
    writeFileSync(path.join(host.workspace, '.git', 'config'), '[core]\n');
    await grantSandboxGroup(path.join(host.workspace, '.git'), TEST_GID);
    await grantSandboxGroup(path.join(host.workspace, '.git', 'objects'), TEST_GID);
    const cmd = 'mv .git .git-old; rm -rf .git; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; ls -a .git';
    const result = await runSandboxed(await runOptions(host), cmd, BOUND);
    expect(result.output).toContain('Device or resource busy');
    expect(existsSync(path.join(host.workspace, '.git-old'))).toBe(false);
    expect(existsSync(path.join(host.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(path.join(host.workspace, '.git', 'config'), 'utf8')).toBe('[core]\n');
  });

  it('has no network: bash /dev/tcp and curl to a loopback server fail with a network error', async () => {
    const host = await makeHost();
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const tcp = await runSandboxed(await runOptions(host), `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`, BOUND);
      expect(tcp.exitCode).not.toBe(0);
      expect(tcp.output).toMatch(/Connection refused|Network is unreachable/);
      expect(tcp.output).not.toContain('connected');
      expect(tcp.output).not.toMatch(/command not found|No such file/);
      if (existsSync('/usr/bin/curl')) {
        const curl = await runSandboxed(await runOptions(host), `curl -sS --max-time 5 http://127.0.0.1:${port}/; echo "exit=$?"`, BOUND);
        expect(curl.output).toMatch(/Failed to connect|Couldn't connect/);
        expect(curl.output).toMatch(/exit=7/);
        expect(curl.output).not.toContain('command not found');
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("neither env nor /proc/1/environ shows the gateway's variables (the canary)", async () => {
    const host = await makeHost();
    expect(process.env.SWB_TEST_SECRET).toBe(CANARY);
    let bwrapEnv: string[] = [];
    const result = await runSandboxed(
      await runOptions(host),
      'env; echo ---; cat /proc/1/environ | tr "\\0" "\\n"; echo ---; cat /proc/self/environ | tr "\\0" "\\n"',
      {
        ...BOUND,
        // bwrap itself (read from the host, as root) was spawned with the four variables only.
        onSpawn: (pid) => {
          bwrapEnv = readFileSync(`/proc/${pid}/environ`, 'utf8')
            .split('\0')
            .filter((entry) => entry.length > 0);
        },
      },
    );
    expect(bwrapEnv.map((entry) => entry.split('=')[0]).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TERM']);
    expect(result.output).not.toContain(CANARY);
    expect(result.output).not.toContain('SWB_TEST_SECRET');
    const envLines = result.output.split('---')[0]?.trim().split('\n') ?? [];
    const names = envLines.map((line) => line.split('=')[0]).filter((name) => name !== '_' && name !== 'PWD' && name !== 'SHLVL');
    expect(names.sort()).toEqual(['HOME', 'LANG', 'PATH', 'TERM']);
  });

  it('enforces the process limit: N + 20 sleeps, fork fails at N, no child survives the call', async () => {
    const host = await makeHost();
    const limit = 12;
    const options = await runOptions(host, { processes: limit });
    // perl forks once per child (no retry loop like bash's), each child execs sleep; the parent
    // reports, then waits until it is aborted.
    const script = `my $ok=0; for my $i (1..${limit + 20}) { my $p=fork(); if(!defined $p){ print "fork failed after $ok: $!\\n"; last } if($p==0){ exec("/usr/bin/sleep","1000") or exit 1 } $ok++ } print "forked $ok\\n"; $|=1; print "ready\\n"; sleep 1000;`;
    const controller = new AbortController();
    let seen: number[] = [];
    const result = await runSandboxed(options, `perl -e '${script}'`, {
      ...BOUND,
      signal: controller.signal,
      onOutput: (text) => {
        if (text.includes('ready')) {
          seen = pidsOfUid(TEST_UID_FIRST);
          controller.abort();
        }
      },
    });
    expect(result.aborted).toBe(true);
    const failed = /fork failed after (\d+): (.*)/.exec(result.output);
    expect(failed, result.output).not.toBeNull();
    const forked = Number(failed?.[1]);
    expect(failed?.[2]).toMatch(/Resource temporarily unavailable/);
    // The parent perl counts as one of the uid's processes; a fork fails at the limit, never above it.
    // No other process runs as this uid, so exactly limit - 1 children fit (measured: 11 of 32 at 12).
    expect(forked).toBe(limit - 1);
    expect(seen.length).toBe(forked + 1);
    expect(seen.filter(alive)).toEqual([]);
    expect(pidsOfUid(TEST_UID_FIRST)).toEqual([]);
  });

  it('a 1 GB allocation hits the address-space limit', async () => {
    const host = await makeHost();
    const options = await runOptions(host, { addressSpaceBytes: 512 * 1024 * 1024 });
    const result = await runSandboxed(options, 'python3 -c "b = bytearray(1 << 30); print(\'allocated\')"', BOUND);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('MemoryError');
    expect(result.output).not.toContain('allocated');
  });

  it('a runaway sleep 1000 is killed at its timeout with its children', async () => {
    const host = await makeHost();
    let seen: number[] = [];
    const result = await runSandboxed(await runOptions(host), 'sleep 1000 & sleep 1000 & echo started; sleep 1000', {
      timeoutMs: 1_500,
      onOutput: (text) => {
        if (text.includes('started')) seen = pidsOfUid(TEST_UID_FIRST);
      },
    });
    expect(result.timedOut).toBe(true);
    expect(result.aborted).toBe(false);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('[killed: timed out after 1500 ms]');
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.filter(alive)).toEqual([]);
    expect(pidsOfUid(TEST_UID_FIRST)).toEqual([]);
  });

  it('an abort kills the whole process group and is reported', async () => {
    const host = await makeHost();
    const controller = new AbortController();
    let seen: number[] = [];
    let groupId = 0;
    const result = await runSandboxed(await runOptions(host), '(sleep 1000 &) ; sleep 1000 & echo started; wait', {
      ...BOUND,
      signal: controller.signal,
      onSpawn: (pid) => {
        groupId = pid;
      },
      onOutput: (text) => {
        if (text.includes('started')) {
          seen = pidsOfUid(TEST_UID_FIRST);
          controller.abort();
        }
      },
    });
    expect(result.aborted).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.output).toContain('[killed: aborted]');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.filter(alive)).toEqual([]);
    expect(alive(groupId)).toBe(false);
    expect(pidsOfUid(TEST_UID_FIRST)).toEqual([]);
  });

  it('background processes left by a command that exits by itself do not outlive the call', async () => {
    const host = await makeHost();
    let seen: number[] = [];
    const go = path.join(host.workspace, 'go');
    // The command waits (bounded by the call's timeout) until the test has seen its children, then exits 0.
    const command = '(sleep 1000 &); sleep 1000 & echo started; while [ ! -e go ]; do sleep 0.05; done';
    const result = await runSandboxed(await runOptions(host), command, {
      ...BOUND,
      onOutput: (text) => {
        if (!text.includes('started')) return;
        seen = pidsOfUid(TEST_UID_FIRST);
        writeFileSync(go, '');
      },
    });
    expect(result.exitCode).toBe(0);
    expect(result.timedOut || result.aborted).toBe(false);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.filter(alive)).toEqual([]);
    expect(pidsOfUid(TEST_UID_FIRST)).toEqual([]);
  });

  it('a command that ignores SIGTERM is killed with SIGKILL after the grace, children included', async () => {
    const host = await makeHost();
    const controller = new AbortController();
    let seen: number[] = [];
    const result = await runSandboxed(await runOptions(host), 'trap "" TERM; sleep 1000 & echo started; wait; echo survived-term', {
      ...BOUND,
      signal: controller.signal,
      onOutput: (text) => {
        if (text.includes('started')) {
          seen = pidsOfUid(TEST_UID_FIRST);
          controller.abort();
        }
      },
    });
    expect(result.aborted).toBe(true);
    expect(result.output).not.toContain('survived-term');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.filter(alive)).toEqual([]);
    expect(pidsOfUid(TEST_UID_FIRST)).toEqual([]);
  });

  it('reports progress (lines so far, elapsed) while a long command runs', async () => {
    const host = await makeHost();
    const progress: { lines: number; elapsedMs: number }[] = [];
    const go = path.join(host.workspace, 'go');
    const result = await runSandboxed(await runOptions(host), 'echo one; echo two; while [ ! -e go ]; do sleep 0.05; done; echo three', {
      ...BOUND,
      onProgress: (p) => {
        progress.push(p);
        if (p.lines >= 2 && !existsSync(go)) writeFileSync(go, '');
      },
    });
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe('one\ntwo\nthree\n');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.some((p) => p.lines === 2)).toBe(true);
    expect(progress.every((p, i) => i === 0 || p.elapsedMs >= (progress[i - 1]?.elapsedMs ?? 0))).toBe(true);
  });
});
