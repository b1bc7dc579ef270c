import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRunLog, buildTestConfig, gatewayChildEnv, gatewayCliPath, repoRoot, startGateway, stopAllGateways, trackChild } from '@switchboard/testkit';

afterAll(() => stopAllGateways());

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe('logs', () => {
  it('are human-readable on a terminal (pino-pretty), and end with the stopped line on SIGTERM', async () => {
    const root = mkdtempSync(join(tmpdir(), 'swb-pretty-'));
    const dataDir = join(root, 'data');
    const configPath = join(root, 'config.json5');
    writeFileSync(configPath, JSON.stringify(buildTestConfig(dataDir)));
    // util-linux `script` gives the gateway a pseudo-terminal as stdout.
    const command = [process.execPath, gatewayCliPath(), 'start', '--config', configPath].map(shellQuote).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: repoRoot(),
      env: { ...gatewayChildEnv(), SHELL: '/bin/sh' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    trackChild(child);
    const lines: string[] = [];
    const plain = (l: string) => l.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r$/, '');
    const seen = (needle: string) =>
      new Promise<void>((resolve, reject) => {
        if (lines.some((l) => l.includes(needle))) return resolve();
        // "close", not "exit": the last lines may still be in the pipe when the process has exited
        child.once('close', (code) =>
          lines.some((l) => l.includes(needle)) ? resolve() : reject(new Error(`exited (${code}) before "${needle}"\n${lines.join('\n')}`)),
        );
        rl.on('line', () => {
          if (lines.some((l) => l.includes(needle))) resolve();
        });
      });
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (l) => {
      lines.push(plain(l));
      appendRunLog(`pretty:${child.pid}`, l);
    });
    await seen('gateway listening');
    const listening = lines.find((l) => l.includes('gateway listening'))!;
    expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: gateway listening$/);
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
    expect(lines.some((l) => l.includes('event: "credentials_created"'))).toBe(true);
    const { pid } = JSON.parse(readFileSync(join(dataDir, 'endpoint'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGTERM');
    await seen('gateway stopped');
    expect(lines.find((l) => l.includes('gateway stopped'))).toMatch(/INFO: gateway stopped$/);
  });

  it('are JSON lines when stdout is not a terminal', async () => {
    const gw = await startGateway();
    const line = await gw.waitForLog((l) => l.includes('"event":"listening"'));
    expect(JSON.parse(line)).toMatchObject({ level: 30, event: 'listening', msg: 'gateway listening', service: 'switchboard' });
    for (const l of gw.logs().filter((x) => x.startsWith('{'))) expect(() => JSON.parse(l)).not.toThrow();
  });
});
