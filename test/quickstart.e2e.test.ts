import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRunLog, connectWs, repoRoot } from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';

const procs: Array<{ pid: number }> = [];
afterAll(() => {
  for (const p of procs) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('quick start', () => {
  it('`npm start` with no API key starts, writes credentials, is ready, and a turn says no model is configured', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'swb-quickstart-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_DATA_DIR: dataDir };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_BASE_URL;
    delete env.SWITCHBOARD_CONFIG;
    const child = spawn('npm', ['start'], { cwd: repoRoot(), env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push({ pid: child.pid! });
    const listening = new Promise<{ url: string }>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
      for (const stream of [child.stdout!, child.stderr!]) {
        createInterface({ input: stream }).on('line', (line) => {
          appendRunLog(`npm-start:${child.pid}`, line);
          if (line.includes('"event":"listening"')) resolve(JSON.parse(line) as { url: string });
        });
      }
    });
    const { url } = await listening;
    const credentialsFile = join(dataDir, 'credentials');
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
