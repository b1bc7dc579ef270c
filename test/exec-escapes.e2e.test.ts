import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, CANARY_ANTHROPIC_KEY } from '@switchboard/testkit';
import { connectClient, collectTurn, toolResultFor, useGateway } from './helpers.js';
import { autoApprove, execCall, execWorkspace, GateFifo } from './exec-helpers.js';

// Acceptance 2 of issue 14 (the parts that go through the gateway process): escapes that must
// fail inside the real bubblewrap sandbox. The owner runs in `default` mode; every ask is approved
// (the test records which asks came), so each command runs whether or not the pipeline asks.
const ENV_CANARY = 'CANARY_exec_env_5Jq8Lm2Vx7Rt4Zk9';
const env = useGateway({ config: { tools: { exec: { progressInterval: '200ms' } } } });
let workspace: string;

beforeAll(async () => {
  // a second gateway process is not needed: restart this one with a canary secret in its environment
  env.gw = await env.gw.restart({ env: { SWB_EXEC_CANARY: ENV_CANARY } });
  workspace = execWorkspace(env.gw);
});

/** Runs one exec call as the owner's turn, approving any ask; the tool result and the asks. */
async function runExec(clientId: string, id: string, command: string) {
  const ws = await connectClient(env.gw);
  const approver = autoApprove(ws, clientId);
  try {
    env.fake.enqueue(execCall(id, command), { text: `done ${id}` });
    ws.send({ type: 'message', clientId, text: `run ${id}` });
    const turn = await collectTurn(ws, clientId, 60_000);
    expect(turn.end).toMatchObject({ type: 'final', text: `done ${id}` });
    return { result: toolResultFor(env.fake, id), asks: approver.requests };
  } finally {
    approver.stop();
    ws.close();
  }
}

describe('exec escapes fail inside the sandbox (acceptance 2)', () => {
  it('/healthz is answered between the tool start and end frames of a running exec', async () => {
    const { fake } = env;
    const ws = await connectClient(env.gw);
    const approver = autoApprove(ws, 'hz1');
    const gate = new GateFifo(workspace, 'healthz.fifo');
    try {
      fake.enqueue(execCall('toolu_hz1', 'read line < healthz.fifo; echo "released $line"'), { text: 'Released.' });
      ws.send({ type: 'message', clientId: 'hz1', text: 'block on the fifo' });
      await ws.next((f) => f.type === 'tool' && f.phase === 'start' && f.toolUseId === 'toolu_hz1', 20_000);
      const health = await fetch(`${env.gw.url}/healthz`);
      expect(health.status).toBe(200);
      // the command cannot end before the gate opens: still no end frame
      expect(ws.frames.some((f) => f.type === 'tool' && f.phase === 'end' && f.toolUseId === 'toolu_hz1')).toBe(false);
      gate.release('now');
      const turn = await collectTurn(ws, 'hz1', 30_000);
      expect(turn.end).toMatchObject({ type: 'final', text: 'Released.' });
      expect(turn.frames.some((f) => f.type === 'tool' && f.phase === 'end' && f.toolUseId === 'toolu_hz1' && !f.isError)).toBe(true);
      expect(toolResultFor(fake, 'toolu_hz1').content).toContain('released now');
    } finally {
      approver.stop();
      gate.close();
      ws.close();
    }
  });

  it('the gateway\'s database is not visible: a safety ask, and once approved "No such file or directory"', async () => {
    const db = join(env.gw.dataDir, 'switchboard.db');
    const { result, asks } = await runExec('db1', 'toolu_db1', `cat ${db}`);
    expect(asks.map((a) => ({ tool: a.tool, source: a.source }))).toEqual([{ tool: 'exec', source: 'safety' }]);
    expect(result.content).toContain('No such file or directory');
    expect(result.content).not.toContain('SQLite format');
  });

  it('the gateway\'s config file is not visible: a safety ask, and once approved "No such file or directory"', async () => {
    const { result, asks } = await runExec('cf1', 'toolu_cf1', `cat ${env.gw.configPath}`);
    expect(asks.map((a) => ({ tool: a.tool, source: a.source }))).toEqual([{ tool: 'exec', source: 'safety' }]);
    expect(result.content).toContain('No such file or directory');
    expect(result.content).not.toContain(CANARY_ANTHROPIC_KEY);
    expect(result.content).not.toContain('apiKey');
  });

  it("/proc/1/environ and env inside hold none of the gateway's variables", async () => {
    const { result } = await runExec(
      'en1',
      'toolu_en1',
      "echo '--- pid 1'; tr '\\0' '\\n' < /proc/1/environ; echo '--- self'; tr '\\0' '\\n' < /proc/self/environ; echo '--- env'; env",
    );
    const out = String(result.content);
    expect(result.is_error).toBeFalsy();
    // the command ran and printed the sandbox's own environment
    expect(out).toContain('--- env');
    expect(out).toContain('TERM=dumb');
    expect(out).toMatch(/^HOME=/m);
    for (const leaked of [ENV_CANARY, 'SWB_EXEC_CANARY', CANARY_ANTHROPIC_KEY, 'SWITCHBOARD_', 'NODE_OPTIONS', 'VITEST']) expect(out).not.toContain(leaked);
    const names = [...out.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]);
    // exactly the four variables bwrap is given, plus what bash itself sets
    const shellOwn = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);
    expect([...new Set(names.filter((n) => !shellOwn.has(n)))].sort()).toEqual(['HOME', 'LANG', 'PATH', 'TERM']);
  });

  it("bash's /dev/tcp to the gateway's own port fails with a network error", async () => {
    const { result } = await runExec('tc1', 'toolu_tc1', `cat < /dev/tcp/127.0.0.1/${env.gw.port}; echo "tcp exit $?"`);
    const out = String(result.content);
    expect(out).toMatch(/tcp exit [1-9]/);
    expect(out).toMatch(/Network is unreachable|Connection refused|Cannot assign requested address/);
    expect(out).not.toMatch(/command not found|No such file/);
  });

  it("curl to the gateway's own /healthz fails with a network error", async () => {
    const probe = await runExec('cu0', 'toolu_cu0', 'command -v curl || echo "no curl here"');
    if (String(probe.result.content).includes('no curl here')) {
      console.warn('curl is not installed inside the sandbox: the curl half of the network check is skipped');
      return;
    }
    const { result } = await runExec('cu1', 'toolu_cu1', `curl -sS --max-time 10 http://127.0.0.1:${env.gw.port}/healthz; echo "curl exit $?"`);
    const out = String(result.content);
    expect(out).toMatch(/curl exit (7|6|28)\b/);
    expect(out).toMatch(/curl: \(\d+\)/);
    expect(out).not.toMatch(/command not found/);
    expect(out).not.toContain('"ok"');
    // the gateway itself is up: the same request from the host is answered
    expect((await api(env.gw, 'GET', '/healthz')).status).toBe(200);
  });
});
