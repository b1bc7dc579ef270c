import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestConfig, gatewayChildEnv, gatewayCliPath, repoRoot, runCli, trackChild, type GatewayConfig } from '@switchboard/testkit';
import { useFakeModel } from './helpers.js';

// Issue 11: start-up failures name the config key and its variable, exit 78, print no errno
// code or stack, and leave no credentials behind.
const model = useFakeModel();

function writeConfig(config: GatewayConfig): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-startup-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'switchboard.json5');
  writeFileSync(file, JSON.stringify(config), { mode: 0o644 });
  return file;
}

const noStack = (text: string) => {
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toMatch(/\bE(ADDRINUSE|ACCES|EXIST|NOTDIR|PERM)\b/);
};

// Root writes anywhere: as root, the "not writable" case runs the gateway as `nobody`, for whom the
// data dir is read-only — possible only where `nobody` can read the checkout (not under /root).
const NOBODY = { uid: 65534, gid: 65534 };
const asUser = process.getuid?.() === 0 ? NOBODY : {};
const canRunAsUser =
  !('uid' in asUser) ||
  spawnSync(process.execPath, ['-e', 'require("fs").accessSync(process.argv[1], 4)', gatewayCliPath()], { ...asUser, stdio: 'ignore' }).status === 0;

let busy: Server | undefined;
afterAll(() => busy?.close());

describe('start-up errors (issue 11)', () => {
  it('port in use: exits 78 naming gateway.port and SWITCHBOARD_PORT; no credentials written', async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy!.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const dataDir = join(mkdtempSync(join(tmpdir(), 'swb-startup-')), 'data');
    const r = await runCli(['start'], { configPath: writeConfig(buildTestConfig(dataDir, model.fake.url, { gateway: { port } })), timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('gateway.port');
    expect(r.stderr).toContain('SWITCHBOARD_PORT');
    expect(r.stderr).toContain(String(port));
    noStack(r.stderr + r.stdout);
    expect(existsSync(join(dataDir, 'credentials'))).toBe(false);
    expect(existsSync(join(dataDir, 'credentials.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'endpoint'))).toBe(false);
  });

  it('data dir is a file: exits 78 naming gateway.dataDir and SWITCHBOARD_DATA_DIR', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'swb-startup-')), 'data');
    writeFileSync(file, 'not a directory');
    const r = await runCli(['start'], { configPath: writeConfig(buildTestConfig(file, model.fake.url)), timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('gateway.dataDir');
    expect(r.stderr).toContain('SWITCHBOARD_DATA_DIR');
    expect(r.stderr).toContain(file);
    noStack(r.stderr + r.stdout);
  });

  it.skipIf(!canRunAsUser)('data dir not writable: exits 78 naming gateway.dataDir and SWITCHBOARD_DATA_DIR', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'swb-startup-'));
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir);
    chmodSync(parent, 0o755);
    chmodSync(dataDir, 0o555);
    const configPath = writeConfig(buildTestConfig(dataDir, model.fake.url));
    const child = spawn(process.execPath, [gatewayCliPath(), 'start', '--config', configPath], {
      cwd: repoRoot(),
      env: gatewayChildEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...asUser,
    });
    trackChild(child);
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    clearTimeout(timer);
    expect(code).toBe(78);
    expect(stderr).toContain('gateway.dataDir');
    expect(stderr).toContain('SWITCHBOARD_DATA_DIR');
    expect(stderr).toContain(dataDir);
    noStack(stderr + stdout);
  });

  it('warns when no chat channel is configured', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'swb-startup-')), 'data');
    const config = buildTestConfig(dataDir, model.fake.url);
    config.channels = {};
    const child = spawn(process.execPath, [gatewayCliPath(), 'start', '--config', writeConfig(config)], {
      cwd: repoRoot(),
      env: gatewayChildEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    let out = '';
    const listening = new Promise<void>((resolve) =>
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        if (out.includes('"listening"')) resolve();
      }),
    );
    await listening;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    const warning = out.split('\n').find((l) => l.includes('"no_chat_channel"'));
    expect(warning).toBeDefined();
    expect(warning).toContain('channels.websocket');
    expect(JSON.parse(warning!).level).toBe(40);
  });
});
