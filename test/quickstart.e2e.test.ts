import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { CANARY_ANTHROPIC_KEY, appendRunLog, connectWs, gatewayChildEnv, repoRoot, startFakeAnthropic, type FakeAnthropic } from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';
import { cloneCheckout, reuseBuild, shellLines } from './quickstart-clone.js';

const TOKEN_LINE = `node -p 'require("./data/credentials.json").clientToken'`;

const procs: ChildProcess[] = [];
let fake: FakeAnthropic | undefined;
afterAll(async () => {
  for (const p of procs) {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await fake?.close();
});

/** The environment a new user's shell would have, minus anything pointing at another gateway. */
function userEnv(extra: Record<string, string>): Record<string, string> {
  // npm's update check would be egress (the guard refuses it): a user's npm may do it, a test's must not.
  const env = gatewayChildEnv({ npm_config_update_notifier: 'false', ...extra });
  for (const k of ['SWITCHBOARD_CONFIG', 'SWITCHBOARD_DATA_DIR', 'SWITCHBOARD_HOST', 'SWITCHBOARD_CLIENT_TOKEN', 'SWITCHBOARD_TOKEN']) delete env[k];
  return { ...env, ...extra };
}

/** Starts a long-running shell line (detached, so its whole group can be killed); resolves with its `listening` log line. */
function startServer(line: string, cwd: string, env: Record<string, string>): Promise<{ child: ChildProcess; listening: { url: string }; lines: string[] }> {
  const child = spawn('bash', ['-c', line], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`\`${line}\` exited with ${code}\n${lines.slice(-20).join('\n')}`)));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (l) => {
        lines.push(l);
        appendRunLog(`quickstart:${child.pid}`, l);
        if (l.includes('"event":"listening"')) resolve({ child, listening: JSON.parse(l) as { url: string }, lines });
      });
    }
  });
}

/** Runs one shell line to completion, like a user at a prompt. */
function run(line: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', line], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      appendRunLog(`quickstart-line:${child.pid}`, `${line}\n${stdout}${stderr}`);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('quick start', () => {
  it("the README's quick start, line by line in a fresh clone: npm start, the credentials one-liner, a chat that answers", { timeout: 240_000 }, async () => {
    const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8');
    const lines = shellLines(readme, 'Quick start');
    // The first line that reads the credentials is exactly the documented one-liner.
    expect(lines.find((l) => l.includes('credentials'))).toBe(TOKEN_LINE);
    expect(lines).toContain('npm start');

    const clone = cloneCheckout();
    fake = await startFakeAnthropic();
    // Only the port differs from a user's machine: other tests run beside this one.
    const env = userEnv({ ANTHROPIC_API_KEY: CANARY_ANTHROPIC_KEY, ANTHROPIC_BASE_URL: fake.url, SWITCHBOARD_PORT: '0' });
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    const ran: Array<{ line: string; stdout: string }> = [];
    for (const line of lines) {
      if (/^npm (install|ci)\b/.test(line)) {
        // No install inside the suite: node_modules is linked in, and the build install's `prepare` makes is reused.
        reuseBuild(clone);
        continue;
      }
      if (line === 'npm start') {
        server = await startServer(line, clone, env);
        continue;
      }
      expect(server, `"${line}" comes after npm start`).toBeDefined();
      const r = await run(line, clone, env);
      expect(r, line).toMatchObject({ code: 0 });
      ran.push({ line, stdout: r.stdout });
    }
    const creds = JSON.parse(readFileSync(join(clone, 'data', 'credentials.json'), 'utf8')) as { clientToken: string; operatorToken: string };
    expect(statSync(join(clone, 'data', 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(ran.find((r) => r.line === TOKEN_LINE)?.stdout.trim()).toBe(creds.clientToken);
    // The chat line uses the one-liner's token.
    const chatLine = ran.find((r) => r.line !== TOKEN_LINE && r.line.includes(TOKEN_LINE));
    expect(chatLine?.line).toContain('"hello"');
    expect(chatLine?.stdout.trim()).toBe('echo: hello');

    // The first start printed a ready-to-paste chat command: it reads the token from the file, never contains it.
    const notice = server!.lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event?: string; chatCommand?: string; msg: string })
      .find((l) => l.event === 'credentials_created')!;
    expect(notice.chatCommand).toBeDefined();
    expect(notice.msg).toContain(notice.chatCommand);
    for (const l of server!.lines) {
      expect(l).not.toContain(creds.clientToken);
      expect(l).not.toContain(creds.operatorToken);
    }
    expect(notice.chatCommand).toContain(TOKEN_LINE);
    const pasted = await run(notice.chatCommand!, clone, env);
    expect(pasted).toMatchObject({ code: 0 });
    expect(pasted.stdout.trim()).toBe('echo: hello');
    // Each chat used a fresh clientId: both were answered by the model.
    expect(fake.requests.filter((r) => r.path.endsWith('/messages')).length).toBeGreaterThanOrEqual(2);

    const endpoint = JSON.parse(readFileSync(join(clone, 'data', 'endpoint'), 'utf8')) as { pid: number };
    process.kill(endpoint.pid, 'SIGTERM');
    const code = await new Promise<number | null>((r) => server!.child.once('exit', r));
    expect(code).toBe(0);
  });

  it('`npm start` with no API key starts, writes credentials, is ready, and a turn says no model is configured', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'swb-quickstart-'));
    const env = userEnv({ SWITCHBOARD_PORT: '0', SWITCHBOARD_DATA_DIR: dataDir });
    const { child, listening } = await startServer('npm start', repoRoot(), env);
    const { url } = listening;
    const credentialsFile = join(dataDir, 'credentials.json');
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'switchboard.db')).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { clientToken: string; operatorToken: string };
    const endpoint = JSON.parse(readFileSync(join(dataDir, 'endpoint'), 'utf8')) as { url: string; pid: number };
    expect(endpoint.url).toBe(url);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, state: 'up' });
    const details = await fetch(`${url}/readyz`, { headers: bearer(creds.operatorToken) });
    expect(await details.json()).toMatchObject({ ready: true, channels: { 'websocket:default': { state: 'up' } } });
    const ws = await connectWs(`${url.replace('http', 'ws')}/ws`, { headers: bearer(creds.clientToken) });
    const turn = await chat(ws, 'q1', 'hello?');
    expect(turn.end).toMatchObject({ type: 'error', code: 'model_error' });
    expect(turn.end.message).toContain('No model is configured');
    ws.close();
    // SIGTERM to the gateway itself (npm would report a signal, not the gateway's exit code).
    process.kill(endpoint.pid, 'SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(0);
  });
});
