import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CANARY_TELEGRAM_TOKEN,
  EgressRefusedError,
  buildTestConfig,
  gatewayChildEnv,
  gatewayCliPath,
  isLoopbackHost,
  repoRoot,
  trackChild,
  stopAllGateways,
} from '@switchboard/testkit';

// 192.0.2.1 is TEST-NET-1 (RFC 5737): never routed. It is only ever the refused target here —
// the guard refuses before a packet is sent.
const OFF_MACHINE = '192.0.2.1';

afterAll(() => stopAllGateways());

/** A private egress record, so these deliberate refusals do not fail the run's record check. */
function egressLog(): string {
  return join(mkdtempSync(join(tmpdir(), 'swb-egress-')), 'egress-refused');
}

/** Runs a script in a child with the environment every spawned gateway gets. */
function runNode(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repoRoot(),
    env: gatewayChildEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('no egress from tests', () => {
  it('knows loopback from everything else', () => {
    for (const h of ['127.0.0.1', '127.0.5.9', 'localhost', 'LOCALHOST.', '::1', '[::1]', '::ffff:127.0.0.1', '0.0.0.0'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of [OFF_MACHINE, 'api.telegram.org', 'slack.com', '10.0.0.1', '::ffff:192.0.2.1', '2001:db8::1', 'localhost.example.com', ''])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it('is installed in the test process: a connection off the machine throws before connecting', () => {
    const before = process.env.SWITCHBOARD_EGRESS_LOG;
    process.env.SWITCHBOARD_EGRESS_LOG = egressLog();
    try {
      expect(() => net.connect(443, OFF_MACHINE)).toThrow(EgressRefusedError);
      expect(() => net.connect({ host: 'swb-egress-check.invalid', port: 80 })).toThrow(
        /no-egress guard: refused a connection to swb-egress-check\.invalid:80/,
      );
    } finally {
      if (before === undefined) delete process.env.SWITCHBOARD_EGRESS_LOG;
      else process.env.SWITCHBOARD_EGRESS_LOG = before;
    }
  });

  it('a spawned process that tries net, tls, fetch or dns off the machine fails with the guard error; loopback still works', async () => {
    const record = egressLog();
    const script = `
      import net from 'node:net'; import tls from 'node:tls'; import dns from 'node:dns';
      const out = {};
      const attempt = async (name, fn) => { try { await fn(); out[name] = 'connected'; } catch (e) { out[name] = (e.cause ?? e).code + ' ' + (e.cause ?? e).message; } };
      await attempt('net', () => net.connect(443, '${OFF_MACHINE}'));
      await attempt('tls', () => tls.connect({ host: '${OFF_MACHINE}', port: 443 }));
      await attempt('fetch', () => fetch('http://${OFF_MACHINE}:80/'));
      await attempt('fetchName', () => fetch('https://api.telegram.org/'));
      await attempt('dns', () => dns.promises.lookup('api.telegram.org'));
      const server = net.createServer((s) => s.end('hi')).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      out.loopback = await new Promise((resolve, reject) => { const s = net.connect(server.address().port, '127.0.0.1'); let d = ''; s.on('data', (c) => (d += c)); s.on('end', () => resolve(d)); s.on('error', reject); });
      server.close();
      process.stdout.write(JSON.stringify(out));
    `;
    const r = await runNode(script, { SWITCHBOARD_EGRESS_LOG: record });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, string>;
    expect(out.net).toBe(
      `ERR_TEST_EGRESS no-egress guard: refused a connection to ${OFF_MACHINE}:443 (tests may only reach loopback; point this URL at a fake)`,
    );
    expect(out.tls).toContain(`ERR_TEST_EGRESS no-egress guard: refused a connection to ${OFF_MACHINE}:443`);
    expect(out.fetch).toContain(`ERR_TEST_EGRESS no-egress guard: refused a connection to ${OFF_MACHINE}:80`);
    expect(out.fetchName).toContain('ERR_TEST_EGRESS no-egress guard: refused a connection to api.telegram.org:443');
    expect(out.dns).toContain('ERR_TEST_EGRESS no-egress guard: refused a connection to api.telegram.org (dns.promises.lookup)');
    expect(out.loopback).toBe('hi');
    expect(readFileSync(record, 'utf8')).toContain(`refused ${OFF_MACHINE}:443`);
  });

  it('a gateway whose platform URL was not pointed at a fake is refused by the guard, loudly', async () => {
    const record = egressLog();
    const root = mkdtempSync(join(tmpdir(), 'swb-egress-gw-'));
    const config = buildTestConfig(join(root, 'data'), undefined, {
      channels: { telegram: { accounts: { main: { token: CANARY_TELEGRAM_TOKEN, apiRoot: `http://${OFF_MACHINE}:9` } } } },
    });
    const configPath = join(root, 'config.json5');
    writeFileSync(configPath, JSON.stringify(config));
    const child = spawn(process.execPath, [gatewayCliPath(), 'start', '--config', configPath], {
      cwd: repoRoot(),
      env: gatewayChildEnv({ SWITCHBOARD_EGRESS_LOG: record }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    const refused = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`gateway exited (${code}) before the guard refused anything`)));
      createInterface({ input: child.stderr }).on('line', (l) => {
        if (l.includes(`refused ${OFF_MACHINE}:9`)) resolve(l);
      });
    });
    expect(refused).toMatch(/^\[no-egress:\d+\] refused 192\.0\.2\.1:9/);
    expect(existsSync(record)).toBe(true);
    child.kill('SIGKILL');
  });
});
