import { statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, runCli } from '@switchboard/testkit';
import { ALICE, BOB, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// The admin CLI: `principals` works on the database through the control API's own service;
// `pairing` calls the running gateway's control API (approval must answer held messages).

let pairingToken: string;

const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCli(args, { gateway: env.gw, env: extraEnv });
const json = (stdout: string) => JSON.parse(stdout) as any;

/** Sends a first DM from an unknown person and returns the pairing code they were given. */
async function pairingCode(who: typeof BOB, text: string): Promise<string> {
  env.tg.sendUserMessage(TOKEN, { chat: who.dm, from: who.user, text });
  const notice = await waitForText(env.tg, who.dm.id, 'pairing code');
  return /code is ([A-HJ-NP-Z2-9]{8})/.exec(String(params(notice).text))![1]!;
}

const env = useTelegramEnv({ dmPolicy: 'pairing' });
beforeAll(async () => {
  const made = await api(env.gw, 'POST', '/api/v1/tokens', {
    token: env.gw.credentials().operatorToken,
    body: { kind: 'operator', name: 'pairing-cli', scopes: ['pairing'] },
  });
  pairingToken = made.json.secret;
});

describe('switchboard principals', () => {
  it('lists, creates and changes roles, audited as the CLI user', async () => {
    const created = await cli(['principals', 'create', 'carol', '--role', 'member']);
    expect(created.code).toBe(0);
    expect(json(created.stdout).principal).toMatchObject({ name: 'carol', role: 'member' });
    const dup = await cli(['principals', 'create', 'carol', '--role', 'guest']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');
    expect((await cli(['principals', 'create', 'dan', '--role', 'emperor'])).code).toBe(2);

    const changed = await cli(['principals', 'set-role', 'carol', 'admin']);
    expect(json(changed.stdout).principal).toMatchObject({ name: 'carol', role: 'admin' });
    expect((await cli(['principals', 'set-role', 'nobody', 'admin'])).code).toBe(1);
    const lastOwner = await cli(['principals', 'set-role', 'owner', 'member']);
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain('last owner');

    const list = json((await cli(['principals', 'list'])).stdout).principals as any[];
    expect(list.map((p) => `${p.name}:${p.role}`)).toEqual(['owner:owner', 'carol:admin']);
    // The running gateway sees the change at once (same database).
    const viaApi = await api(env.gw, 'GET', '/api/v1/principals', { token: env.gw.credentials().operatorToken });
    expect((viaApi.json.principals as any[]).find((p) => p.name === 'carol').role).toBe('admin');
    // create writes the database (audited as the CLI user); set-role goes through the running
    // gateway's control API (so it can close sockets), audited as the operator token used.
    const audit = await api(env.gw, 'GET', `/api/v1/audit?actor=cli:${userInfo().username}`, { token: env.gw.credentials().operatorToken });
    expect((audit.json.entries as any[]).map((e) => e.action)).toEqual(['principal.create']);
    const viaGateway = await api(env.gw, 'GET', '/api/v1/audit?actor=operator:bootstrap-operator', { token: env.gw.credentials().operatorToken });
    expect((viaGateway.json.entries as any[]).map((e) => `${e.action}:${e.target}`)).toContain(`principal.update:${json(changed.stdout).principal.id}`);
  });
});

describe('switchboard backup', () => {
  it('backs the database up while the gateway runs', async () => {
    const file = join(env.gw.dataDir, 'backup.db');
    const res = await cli(['backup', file]);
    expect(res.code, res.stderr).toBe(0);
    expect(json(res.stdout)).toEqual({ backup: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const db = new Database(file, { readonly: true });
    const names = (db.prepare('SELECT name FROM principals ORDER BY name').all() as Array<{ name: string }>).map((r) => r.name);
    db.close();
    expect(names).toContain('carol');
    expect(names).toContain('owner');
  });
});

describe('switchboard pairing', () => {
  it('lists, approves (the held message is answered) and rejects through the running gateway', async () => {
    const code = await pairingCode(BOB, 'hello from bob');
    const listed = await cli(['pairing', 'list'], { SWITCHBOARD_TOKEN: pairingToken });
    expect(listed.code).toBe(0);
    expect(json(listed.stdout).requests).toEqual([expect.objectContaining({ code, identity: `telegram:${BOB.user.id}`, heldMessages: 1 })]);

    const approved = await cli(['pairing', 'approve', code.toLowerCase(), '--role', 'guest', '--token', pairingToken]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(json(approved.stdout)).toMatchObject({ outcome: 'approved', answered: 1 });
    await waitForText(env.tg, BOB.dm.id, 'echo: hello from bob');
    const bob = (await api(env.gw, 'GET', `/api/v1/principals/${json(approved.stdout).principalId}`, { token: env.gw.credentials().operatorToken })).json
      .principal;
    expect(bob.role).toBe('guest');
    expect((await cli(['pairing', 'approve', code], { SWITCHBOARD_TOKEN: pairingToken })).code).toBe(1);

    const second = await pairingCode(ALICE, 'hello from alice');
    const rejected = await cli(['pairing', 'reject', second], { SWITCHBOARD_TOKEN: pairingToken });
    expect(rejected.code).toBe(0);
    expect(json(rejected.stdout)).toEqual({ outcome: 'rejected' });
    const history = json((await cli(['pairing', 'list', '--status', 'rejected'], { SWITCHBOARD_TOKEN: pairingToken })).stdout).requests as any[];
    expect(history.map((r) => r.code)).toEqual([second]);
  });

  it('reports a wrong token, bad usage and a gateway that is not running', async () => {
    const wrong = await cli(['pairing', 'list', '--token', 'swb_o_not-a-real-token-xxxxxxxxxxxxxxxx']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401');
    expect((await cli(['pairing', 'approve'])).code).toBe(2);
    expect((await cli(['pairing', 'approve', 'ABCDEFGH', '--role', 'emperor'])).code).toBe(2);
    await env.gw.stop();
    const down = await cli(['pairing', 'list'], { SWITCHBOARD_TOKEN: pairingToken });
    expect(down.code).toBe(69);
    // A clean stop removes <dataDir>/endpoint (issue 11), so the CLI finds no gateway at all.
    expect(down.stderr).toMatch(/no running gateway found|is it running/);
  });
});
