/** The runner's own behaviour with real bubblewrap: output order and budget, exit codes, uids, ownership, the probe. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explainSandboxFailure, grantSandboxGroup, OutputBuffer, probeSandbox, runSandboxed, SandboxBusyError, UidAllocator } from '../../src/index.js';
import { makeHost, runOptions, TEST_GID, TEST_UID_FIRST } from './helpers.js';

const BOUND = { timeoutMs: 30_000 };

describe('runSandboxed', () => {
  it('interleaves stdout and stderr in arrival order and passes the exit code through', async () => {
    const host = await makeHost();
    const result = await runSandboxed(await runOptions(host), 'echo a; echo b >&2; echo c; echo d >&2; exit 3', BOUND);
    expect(result.output).toBe('a\nb\nc\nd\n');
    expect(result.exitCode).toBe(3);
    expect(result.truncated).toBe(false);
    expect(result.timedOut || result.aborted).toBe(false);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('cuts long output to the budget keeping head and tail', async () => {
    const host = await makeHost();
    const result = await runSandboxed(await runOptions(host, {}, { outputBudget: 200 }), 'seq 1 100000', BOUND);
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.output.endsWith('99999\n100000\n')).toBe(true);
    expect(result.output).toMatch(/\[\d+ characters omitted\]/);
    expect(result.output.length).toBeLessThan(300);
  });

  it('gives concurrent runs distinct uids and refuses a run when every uid is taken', async () => {
    const host = await makeHost();
    const uids = new UidAllocator(TEST_UID_FIRST, TEST_UID_FIRST + 1);
    const options = await runOptions(host, {}, { uids });
    const [a, b] = await Promise.all([runSandboxed(options, 'id -u', BOUND), runSandboxed(options, 'id -u', BOUND)]);
    expect(new Set([a.output.trim(), b.output.trim()])).toEqual(new Set([String(TEST_UID_FIRST), String(TEST_UID_FIRST + 1)]));
    expect(uids.busy).toBe(0);
    uids.acquire();
    uids.acquire();
    await expect(runSandboxed(options, 'true', BOUND)).rejects.toBeInstanceOf(SandboxBusyError);
  });

  it('a file the gateway wrote is writable by the sandbox once given the sandbox group', async () => {
    const host = await makeHost();
    const file = path.join(host.workspace, 'notes.txt');
    writeFileSync(file, 'from write_file\n', { mode: 0o644 });
    const denied = await runSandboxed(await runOptions(host), 'cat notes.txt; echo more >> notes.txt', BOUND);
    expect(denied.output).toContain('from write_file');
    expect(denied.output).toContain('Permission denied');
    await grantSandboxGroup(file, TEST_GID);
    expect(statSync(file).gid).toBe(TEST_GID);
    expect(statSync(file).mode & 0o070).toBe(0o060);
    const allowed = await runSandboxed(await runOptions(host), 'echo more >> notes.txt && mkdir sub && echo ok', BOUND);
    expect(allowed.output).toBe('ok\n');
    expect(readFileSync(file, 'utf8')).toBe('from write_file\nmore\n');
    // New entries of a setgid workspace folder inherit the sandbox group.
    expect(statSync(path.join(host.workspace, 'sub')).gid).toBe(TEST_GID);
  });

  it('observers that throw do not break the run', async () => {
    const host = await makeHost();
    const boom = () => {
      throw new Error('observer failed');
    };
    const result = await runSandboxed(await runOptions(host), 'echo one; echo two', { ...BOUND, onOutput: boom, onSpawn: boom, onProgress: boom });
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe('one\ntwo\n');
  });

  it('an already-aborted signal starts nothing', async () => {
    const host = await makeHost();
    const controller = new AbortController();
    controller.abort();
    const result = await runSandboxed(await runOptions(host), 'touch started', { ...BOUND, signal: controller.signal });
    expect(result.aborted).toBe(true);
    expect(result.exitCode).toBeNull();
  });
});

describe('probeSandbox', () => {
  const scratch: string[] = [];
  afterEach(() => {
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const scratchDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-probe-'));
    scratch.push(dir);
    return dir;
  };

  it('says ok when bwrap runs, and cleans up its scratch workspace', async () => {
    const host = await makeHost();
    const dir = scratchDir();
    expect(await probeSandbox({ ...(await runOptions(host)), scratchDir: dir })).toEqual({ ok: true });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names a missing binary', async () => {
    const host = await makeHost();
    const probe = await probeSandbox({ ...(await runOptions(host)), bwrapPath: '/nonexistent/bwrap', scratchDir: scratchDir() });
    expect(probe.ok).toBe(false);
    expect(probe.ok === false && probe.reason).toMatch(/bubblewrap not found at \/nonexistent\/bwrap/);
  });

  it('reports a failing sandbox with the reason (setpriv to a bad uid)', async () => {
    const host = await makeHost();
    const probe = await probeSandbox({ ...(await runOptions(host)), setprivPath: '/nonexistent/setpriv', scratchDir: scratchDir() });
    expect(probe.ok).toBe(false);
    expect(probe.ok === false && probe.detail).toContain('/nonexistent/setpriv');
  });

  it('explains the namespace refusals Docker gives', () => {
    expect(
      explainSandboxFailure('bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces'),
    ).toMatch(/user namespaces are refused/);
    expect(explainSandboxFailure('bwrap: Creating new namespace failed: Operation not permitted')).toMatch(/namespaces/);
    expect(explainSandboxFailure("bwrap: Can't mount proc on /newroot/proc: Operation not permitted")).toMatch(/cannot mount/);
    expect(explainSandboxFailure('something else')).toMatch(/failed to run a trivial command/);
  });
});

describe('OutputBuffer', () => {
  it('keeps everything within the budget and counts lines', () => {
    const buffer = new OutputBuffer(100);
    buffer.push('a\nb');
    buffer.push('\nc');
    expect(buffer.text()).toBe('a\nb\nc');
    expect(buffer.lines).toBe(3);
    expect(buffer.truncated).toBe(false);
  });

  it('keeps head and tail across many small pushes', () => {
    const buffer = new OutputBuffer(10);
    for (let i = 0; i < 1000; i++) buffer.push(String(i % 10));
    expect(buffer.truncated).toBe(true);
    expect(buffer.chars).toBe(1000);
    expect(buffer.text()).toBe('01234\n… [990 characters omitted] …\n56789');
  });

  it('refuses a budget below 2', () => {
    expect(() => new OutputBuffer(1)).toThrow(/budget/);
  });
});

describe('UidAllocator', () => {
  it('hands out each uid once until released, and refuses bad ranges', () => {
    const uids = new UidAllocator(10, 11);
    expect([uids.acquire(), uids.acquire(), uids.acquire()]).toEqual([10, 11, undefined]);
    uids.release(10);
    expect(uids.acquire()).toBe(10);
    expect(() => new UidAllocator(0, 5)).toThrow(/range/);
    expect(() => new UidAllocator(9, 8)).toThrow(/range/);
  });
});
