/** The `exec` tool over the real checks and real bubblewrap: classification, runs, progress, timeouts, the audit record. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext, ToolProgress } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { createExecTool, type ExecRunRecord, type ExecToolOptions, loadExecChecks } from '../../src/exec/index.js';
import { DEFAULT_SANDBOX_LIMITS, liveGroupMembers } from '../../src/index.js';
import { type Host, makeHost, runOptions } from './helpers.js';

const SETTINGS = { network: false, timeoutMs: 20_000, maxTimeoutMs: 30_000, limits: { ...DEFAULT_SANDBOX_LIMITS, cpuSeconds: 20 } };

async function toolFor(host: Host, extra: Partial<ExecToolOptions> = {}) {
  const { workspace: _w, network: _n, limits: _l, ...runner } = await runOptions(host);
  const runs: ExecRunRecord[] = [];
  const tool = createExecTool({
    checks: await loadExecChecks(),
    sandbox: 'bwrap',
    runner,
    settingsFor: () => SETTINGS,
    onRun: (record) => runs.push(record),
    ...extra,
  });
  return { tool, runs };
}

function ctxFor(host: Host, progress?: (update: ToolProgress) => void, signal = new AbortController().signal): ToolContext {
  return { signal, toolUseId: 'tu_1', sessionId: 's_1', turnId: 't_1', agentId: 'default', workspace: host.workspace, ...(progress ? { progress } : {}) };
}

describe('exec tool', () => {
  it('classifies calls for the permission pipeline from the checks', async () => {
    const host = await makeHost();
    const { tool } = await toolFor(host);
    const check = (command: string) => tool.checkPermissions?.({ command }, ctxFor(host));
    await expect(check('echo hi && ls')).resolves.toEqual({ behavior: 'passthrough', access: 'read' });
    await expect(check('touch a && mkdir b')).resolves.toEqual({ behavior: 'passthrough', access: 'edit' });
    await expect(check('npm test')).resolves.toEqual({ behavior: 'passthrough' });
    await expect(check('rm -rf .')).resolves.toMatchObject({ behavior: 'ask', source: 'safety' });
    await expect(check('cat x | sh')).resolves.toMatchObject({ behavior: 'ask', source: 'safety' });
    await expect(check('echo x > /etc/passwd')).resolves.toMatchObject({ behavior: 'deny', source: 'safety' });
    expect(tool.ruleContents?.({ command: 'git status && npm test' })).toEqual(['git status', 'npm test']);
  });

  it('without a sandbox every call asks, with source sandbox (a safety objection still comes first)', async () => {
    const host = await makeHost();
    const { tool } = await toolFor(host, { sandbox: 'none' });
    await expect(tool.checkPermissions?.({ command: 'ls' }, ctxFor(host))).resolves.toMatchObject({ behavior: 'ask', source: 'sandbox' });
    await expect(tool.checkPermissions?.({ command: 'rm -rf .' }, ctxFor(host))).resolves.toMatchObject({ behavior: 'ask', source: 'safety' });
  });

  it('without a sandbox runs on the host in the workspace, with only the four variables, and kills the group at its timeout', async () => {
    const host = await makeHost();
    const { tool, runs } = await toolFor(host, { sandbox: 'none' });
    const out = await tool.call({ command: 'pwd; echo "home=$HOME"; env | grep -c VITEST; echo e >&2' }, ctxFor(host));
    expect(out.content).toMatch(/^Exit code 0 · /);
    expect(out.content).toContain(`\n${host.workspace}\nhome=${host.workspace}\n0\ne\n`);
    const killed = await tool.call({ command: 'sleep 1000 & sleep 1000; echo never', timeout: 300 }, ctxFor(host));
    expect(killed.isError).toBe(true);
    expect(killed.content).toMatch(/^Timed out and killed/);
    expect(killed.content).not.toContain('never');
    expect(runs.map((r) => r.sandbox)).toEqual(['none', 'none']);
    // The background sleep went with its process group.
    expect(runs[1]?.pid).toBeGreaterThan(0);
    expect(liveGroupMembers(runs[1]?.pid ?? 0)).toEqual([]);
  });

  it('refuses a timeout above tools.exec.maxTimeout, naming the key', async () => {
    const host = await makeHost();
    const { tool } = await toolFor(host);
    await expect(tool.validateInput?.({ command: 'ls', timeout: 30_001 }, ctxFor(host))).resolves.toMatchObject({
      ok: false,
      message: expect.stringContaining('tools.exec.maxTimeout'),
    });
    await expect(tool.validateInput?.({ command: 'ls', timeout: 30_000 }, ctxFor(host))).resolves.toEqual({ ok: true });
  });

  it('runs in the sandbox and returns the exit code and the interleaved output; the run is recorded without its output', async () => {
    const host = await makeHost();
    writeFileSync(path.join(host.workspace, 'a.txt'), 'x');
    const { tool, runs } = await toolFor(host);
    const out = await tool.call({ command: "echo hi && ls && printf 'o%s\\n' ops >&2 && exit 4" }, ctxFor(host));
    expect(out.content).toMatch(/^Exit code 4 · \d+\.\d+ s\n\nhi\n(.*\n)*a\.txt\n(.*\n)*oops\n$/);
    expect(out.isError).toBeUndefined();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      command: "echo hi && ls && printf 'o%s\\n' ops >&2 && exit 4",
      exitCode: 4,
      sandbox: 'bwrap',
      timedOut: false,
      toolUseId: 'tu_1',
    });
    expect(runs[0]?.pid).toBeGreaterThan(0);
    expect(JSON.stringify(runs[0])).not.toContain('oops');
  });

  it('reports progress while the command runs', async () => {
    const host = await makeHost();
    const fifo = path.join(host.workspace, 'go');
    execFileSync('mkfifo', ['-m', '0666', fifo]);
    const { tool } = await toolFor(host);
    const updates: ToolProgress[] = [];
    let first!: () => void;
    const progressed = new Promise<void>((resolve) => {
      first = resolve;
    });
    const run = tool.call(
      { command: 'echo started; read line < go; echo "got $line"' },
      ctxFor(host, (update) => {
        updates.push(update);
        first();
      }),
    );
    await progressed;
    // Only now let the command finish: it was still running when progress arrived.
    const writer = await open(fifo, 'w');
    await writer.write('done\n');
    await writer.close();
    const out = await run;
    expect(out.content).toContain('got done');
    expect(updates[0]).toMatchObject({ lines: 1, message: expect.stringMatching(/^1 line so far, /) });
    expect(updates[0]?.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('kills a command at its timeout and marks the result as an error', async () => {
    const host = await makeHost();
    const { tool, runs } = await toolFor(host);
    const out = await tool.call({ command: 'sleep 1000', timeout: 300 }, ctxFor(host));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^Timed out and killed/);
    expect(runs[0]).toMatchObject({ timedOut: true });
  });

  it('waits for a run slot, says so as progress, and gives the slot back', async () => {
    const host = await makeHost();
    let release!: () => void;
    const waits: string[] = [];
    const { tool } = await toolFor(host, {
      slots: {
        acquire: async (_session, _signal, onWait) => {
          onWait?.();
          return () => {
            release();
          };
        },
      },
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const out = await tool.call(
      { command: 'echo ok' },
      ctxFor(host, (update) => waits.push(update.message)),
    );
    await released;
    expect(out.content).toContain('ok');
    expect(waits[0]).toBe('waiting for a free runner');
  });
});
