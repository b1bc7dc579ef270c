import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  buildTestConfig,
  CANARY_ANTHROPIC_KEY,
  CANARY_SLACK_APP_TOKEN,
  CANARY_SLACK_BOT_TOKEN,
  CANARY_SLACK_SIGNING_SECRET,
  connectWs,
  gatewayChildEnv,
  repoRoot,
  runCli,
  startFakeAnthropic,
  startFakeSlack,
  startFakeTelegram,
  type FakeAnthropic,
  type FakeSlack,
  type FakeTelegram,
} from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';
import { TOKEN } from './telegram-helpers.js';

// Acceptance 7 of issue 11: the CLI as an operator uses it — through `npm exec`, `doctor`
// against a good and a broken config, `status`, `token list` / `revoke` through the running gateway.

const json = (s: string) => JSON.parse(s) as any;

/** Runs `npm exec --no -- switchboard ...args` in the checkout, as the README does. */
function npmExec(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['exec', '--no', '--', 'switchboard', ...args], { cwd: repoRoot(), env: gatewayChildEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the bin shim and help', () => {
  it('npm exec --no -- switchboard --help / -h / --version exit 0; every command has --help', async () => {
    const shim = join(repoRoot(), 'apps', 'gateway', 'bin', 'switchboard.js');
    expect(statSync(shim).mode & 0o111).not.toBe(0);
    const help = await npmExec(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('switchboard doctor');
    expect(help.stdout).toContain('switchboard token revoke');
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect((await runCli(['-h'])).code).toBe(0);
    for (const cmd of [
      ['start'],
      ['doctor'],
      ['status'],
      ['token', 'list'],
      ['token', 'revoke'],
      ['token', 'create'],
      ['principals'],
      ['backup'],
      ['pairing'],
      ['migrate-storage'],
    ]) {
      const r = await runCli([...cmd, '--help']);
      expect(r.code, `${cmd.join(' ')} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`switchboard ${cmd[0]}`);
    }
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
  });
});

describe('switchboard doctor', () => {
  let model: FakeAnthropic;
  let tg: FakeTelegram;
  let slack: FakeSlack;
  let busy: Server;
  let busyPort: number;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'swb-doctor-'));
    dirs.push(d);
    return d;
  };
  const write = (dir: string, cfg: unknown) => {
    const file = join(dir, 'switchboard.json');
    writeFileSync(file, JSON.stringify(cfg));
    return file;
  };

  beforeAll(async () => {
    model = await startFakeAnthropic({ apiKey: CANARY_ANTHROPIC_KEY });
    tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: 'swb_doctor_bot', first_name: 'Doctor' }] });
    slack = await startFakeSlack();
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => busy.close(r));
    await slack.close();
    await tg.close();
    await model.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const channels = (telegramToken: string, slackToken: string, signingSecret: string, appToken = CANARY_SLACK_APP_TOKEN) => ({
    telegram: { accounts: { main: { token: telegramToken, apiRoot: tg.apiRoot } } },
    slack: {
      accounts: {
        team: { botToken: slackToken, mode: 'http', signingSecret, apiUrl: slack.apiUrl },
        sock: { botToken: CANARY_SLACK_BOT_TOKEN, mode: 'socket', appToken, apiUrl: slack.apiUrl },
      },
    },
  });

  it('a good config: every check passes, exit 0, and only the free GET /v1/models reaches the model API', async () => {
    const dir = tmp();
    const file = write(
      dir,
      buildTestConfig(join(dir, 'data'), model.url, { channels: channels('${SWB_DOCTOR_TG}', CANARY_SLACK_BOT_TOKEN, CANARY_SLACK_SIGNING_SECRET) }),
    );
    const r = await runCli(['doctor', '--config', file], { env: { SWB_DOCTOR_TG: TOKEN } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const line of [
      'config valid',
      'environment variables set',
      'data dir',
      'port',
      'model key accepted',
      'telegram:main',
      'slack:team bot token',
      'slack:sock bot token',
      'slack:sock app token',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`✓ .*${line}`));
    }
    expect(r.stdout).not.toContain('✗');
    expect(model.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /v1/models']);
    expect(tg.calls.map((c) => c.method)).toContain('getMe');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('a broken config: a checklist with a fix per failure; the exit code counts the failures', async () => {
    const dir = tmp();
    const dataFile = join(dir, 'not-a-dir');
    writeFileSync(dataFile, 'x');
    const cfg = buildTestConfig(dataFile, model.url, {
      gateway: { port: busyPort },
      model: { apiKey: 'sk-ant-wrong-key-for-doctor' },
      channels: channels('999:wrong-telegram-token-for-doctor', 'xoxb-wrong-slack-token', '${SWB_DOCTOR_UNSET}', 'xapp-wrong-app-token'),
    });
    const r = await runCli(['doctor', '--config', write(dir, cfg)]);
    const out = r.stdout;
    expect(out).toMatch(/✗ .*SWB_DOCTOR_UNSET/);
    expect(out).toMatch(/✗ .*data dir/);
    expect(out).toContain('gateway.dataDir');
    expect(out).toMatch(new RegExp(`✗ .*port ${busyPort}`));
    expect(out).toContain('gateway.port');
    expect(out).toMatch(/✗ .*model key/);
    expect(out).toContain('model.apiKey');
    expect(out).toMatch(/✗ .*telegram:main/);
    expect(out).toContain('channels.telegram.accounts.main.token');
    expect(out).toMatch(/✗ .*slack:team/);
    expect(out).toContain('invalid_auth');
    expect(out).toMatch(/✓ .*slack:sock bot token/);
    expect(out).toMatch(/✗ .*slack:sock app token/);
    expect(out).toContain('channels.slack.accounts.sock.appToken');
    expect((out.match(/fix: /g) ?? []).length).toBe(7);
    expect(r.code).toBe(7);
    expect(out + r.stderr).not.toContain('wrong-telegram-token');
    expect(out + r.stderr).not.toContain('sk-ant-wrong');
  });

  it('a model base URL ending in /v1 gets the hint; an unreachable one names host and cause', async () => {
    const dir = tmp();
    const v1 = await runCli(['doctor', '--config', write(dir, buildTestConfig(join(dir, 'data'), `${model.url}/v1`))]);
    expect(v1.code).toBe(1);
    expect(v1.stdout).toContain('remove the /v1 suffix from model.baseUrl');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const down = await runCli(['doctor', '--config', write(dir, buildTestConfig(join(dir, 'data'), `http://127.0.0.1:${port}`))]);
    expect(down.code).toBe(1);
    expect(down.stdout).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('an invalid config exits 78 and names the key', async () => {
    const dir = tmp();
    const r = await runCli(['doctor', '--config', write(dir, { gateway: { port: 'seventy' } })]);
    expect(r.code).toBe(78);
    expect(r.stdout).toMatch(/✗ .*config/);
    expect(r.stdout).toContain('gateway.port');
  });
});

describe('status, token list and token revoke through the running gateway', () => {
  const env = useGateway();

  it('status shows channels, turns, approvals, pairing and usage today', async () => {
    const { gw } = env;
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    expect((await chat(ws, 's1', 'count me')).end).toMatchObject({ type: 'final' });
    ws.close();
    const r = await runCli(['status'], { gateway: gw });
    expect(r.code, r.stderr).toBe(0);
    const s = json(r.stdout);
    expect(s.gateway).toBe(gw.url);
    expect(s.channels).toEqual([expect.objectContaining({ id: 'websocket:default', state: expect.any(String) })]);
    expect(s.turns).toMatchObject({ active: 0 });
    expect(s.turns.today.completed).toBeGreaterThanOrEqual(1);
    expect(s.approvals).toEqual({ pending: 0 });
    expect(s.pairing).toEqual({ pending: 0 });
    expect(s.usage.today.outputTokens).toBeGreaterThan(0);
  });

  it('token list shows metadata, never secrets; revoke closes the open socket; --cascade revokes what a token minted', async () => {
    const { gw } = env;
    const op = gw.credentials().operatorToken;
    const minter = await api(gw, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'operator', name: 'minter', scopes: ['admin'] } });
    expect(minter.status).toBe(201);
    const principals = await api(gw, 'GET', '/api/v1/principals', { token: op });
    const owner = (principals.json.principals as any[]).find((p) => p.name === 'owner');
    const minted = await api(gw, 'POST', '/api/v1/tokens', { token: minter.json.secret, body: { kind: 'client', principalId: owner.id, name: 'minted' } });
    expect(minted.status).toBe(201);
    expect(minted.json.token.createdBy).toBe(minter.json.token.id);

    const a = await connectWs(gw.wsUrl, { headers: bearer(minted.json.secret) });
    await a.next((f) => f.type === 'hello_ok');
    const listed = await runCli(['token', 'list'], { gateway: gw });
    expect(listed.code, listed.stderr).toBe(0);
    const tokens = json(listed.stdout).tokens as any[];
    const row = tokens.find((t) => t.id === minted.json.token.id);
    expect(row).toMatchObject({ name: 'minted', kind: 'client', createdBy: minter.json.token.id, expiresAt: null, revokedAt: null });
    expect(row.lastUsedAt).not.toBeNull();
    expect(listed.stdout).not.toContain(minted.json.secret);
    expect(listed.stdout).not.toContain('secretHash');

    const revoked = await runCli(['token', 'revoke', minter.json.token.id, '--cascade'], { gateway: gw });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(json(revoked.stdout).cascaded.map((t: any) => t.id)).toEqual([minted.json.token.id]);
    expect(await a.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    expect((await api(gw, 'GET', '/api/v1/stats', { token: minter.json.secret })).status).toBe(401);
    const again = await runCli(['token', 'revoke', minter.json.token.id], { gateway: gw });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already revoked');
  });

  it("principals set-role and delete through the running gateway close the person's sockets at once", async () => {
    const { gw } = env;
    const made = json(
      (await runCli(['token', 'create', '--kind', 'client', '--principal', 'pia', '--role', 'admin', '--expires', '30d'], { gateway: gw })).stdout,
    );
    expect(Object.keys(made).sort()).toEqual(['createdPrincipal', 'kind', 'principal', 'principalId', 'secret', 'tokenId']);
    expect(made).toMatchObject({ kind: 'client', principal: 'pia', createdPrincipal: true });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(made.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    const demoted = await runCli(['principals', 'set-role', 'pia', 'guest'], { gateway: gw });
    expect(demoted.code, demoted.stderr).toBe(0);
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'role changed' });
    const again = await connectWs(gw.wsUrl, { headers: bearer(made.secret) });
    await again.next((f) => f.type === 'hello_ok');
    const deleted = await runCli(['principals', 'delete', 'pia'], { gateway: gw });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(json(deleted.stdout)).toMatchObject({ deleted: made.principalId, revokedTokens: 1 });
    expect(await again.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'principal removed' });
    const listed = json((await runCli(['token', 'list'], { gateway: gw })).stdout).tokens as any[];
    const row = listed.find((t) => t.id === made.tokenId);
    // Created through the gateway with the bootstrap operator token: that token is its creator.
    const operators = (await api(gw, 'GET', '/api/v1/tokens?kind=operator', { token: gw.credentials().operatorToken })).json.tokens as any[];
    expect(row.createdBy).toBe(operators.find((t) => t.name === 'bootstrap-operator').id);
    expect(Date.parse(row.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  it('a token past its expiresAt is refused', async () => {
    const { gw } = env;
    const op = gw.credentials().operatorToken;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api(gw, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'operator', name: 'short-lived', scopes: ['read'], expiresAt: later } });
    expect(made.status).toBe(201);
    expect(made.json.token.expiresAt).toBe(later);
    expect((await api(gw, 'GET', '/api/v1/stats', { token: made.json.secret })).status).toBe(200);
    const past = await api(gw, 'POST', '/api/v1/tokens', {
      token: op,
      body: { kind: 'operator', name: 'stale', scopes: ['read'], expiresAt: '2001-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    // Move the expiry into the past in the database: the next request is refused.
    const db = new Database(join(gw.dataDir, 'switchboard.db'));
    db.prepare('UPDATE tokens SET expires_at = ? WHERE id = ?').run(Date.now() - 1000, made.json.token.id);
    db.close();
    expect((await api(gw, 'GET', '/api/v1/stats', { token: made.json.secret })).status).toBe(401);

    // A client token's open socket closes when its expiry passes, without a frame from it.
    const owner = (await api(gw, 'GET', '/api/v1/principals', { token: op })).json.principals.find((p: any) => p.name === 'owner');
    const soon = new Date(Date.now() + 3_000).toISOString();
    const client = await api(gw, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'client', principalId: owner.id, name: 'expiring', expiresAt: soon } });
    expect(client.status).toBe(201);
    const ws = await connectWs(gw.wsUrl, { headers: bearer(client.json.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    expect(await ws.waitClose(15_000)).toMatchObject({ code: 1008, reason: 'token expired' });
    await expect(connectWs(gw.wsUrl, { headers: bearer(client.json.secret) })).rejects.toMatchObject({ status: 401 });
  });

  it('principals list and token list need no channel secrets; backup refuses a missing directory or an existing file', async () => {
    const { gw } = env;
    const dir = mkdtempSync(join(tmpdir(), 'swb-cli-cfg-'));
    const file = join(dir, 'needs-secret.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...gw.config,
        channels: {
          ...(gw.config.channels as object),
          webhook: { accounts: { hook: { secret: '${SWB_UNSET_HOOK_SECRET}', callbackUrl: 'http://127.0.0.1:9/cb' } } },
        },
      }),
    );
    const list = await runCli(['principals', 'list', '--config', file]);
    expect(list.code, list.stderr).toBe(0);
    expect(json(list.stdout).principals.map((p: any) => p.name)).toContain('owner');
    expect((await runCli(['token', 'list', '--config', file])).code).toBe(0);

    const missing = await runCli(['backup', join(dir, 'no-such-dir', 'b.db')], { gateway: gw });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const existing = join(dir, 'existing.db');
    writeFileSync(existing, 'keep me');
    const refused = await runCli(['backup', existing], { gateway: gw });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--force');
    expect(statSync(existing).size).toBe('keep me'.length);
    const forced = await runCli(['backup', existing, '--force'], { gateway: gw });
    expect(forced.code, forced.stderr).toBe(0);
    expect(statSync(existing).size).toBeGreaterThan(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('with no gateway running, token revoke writes the database directly', async () => {
    const { gw } = env;
    const made = await api(gw, 'POST', '/api/v1/tokens', {
      token: gw.credentials().operatorToken,
      body: { kind: 'operator', name: 'offline', scopes: ['read'] },
    });
    await gw.stop();
    const r = await runCli(['token', 'revoke', made.json.token.id], { gateway: gw });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout).token.revokedAt).not.toBeNull();
    const down = await runCli(['status'], { gateway: gw });
    expect(down.code).toBe(69);
  });
});
