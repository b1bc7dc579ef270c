import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, startGateway } from '@switchboard/testkit';
import { bearer, chat, useGateway, toolResultFor, connectPerson } from './helpers.js';

// File edits inside one's own workspace run without asking: the point here is whose workspace.
const env = useGateway({ config: { agents: { default: { mode: 'acceptEdits' } } }, client: true });

const resultFor = (id: string) => toolResultFor(env.fake, id);

const person = (name: string, role: string) => connectPerson(env.gw, name, role);

describe('per-person workspaces', () => {
  it('a member cannot read, list or overwrite a file the owner wrote', async () => {
    const { fake, gw, ws } = env;
    await ws.next((f) => f.type === 'hello_ok');
    const ownerId = gw.credentials().principalId;
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'owner-notes.txt', content: 'the owner secret 4242' }, id: 'toolu_own_w' }] },
      { text: 'owner wrote' },
    );
    expect((await chat(ws, 'own1', 'write my notes')).end).toMatchObject({ type: 'final', text: 'owner wrote' });
    const ownerDir = join(gw.dataDir, 'workspaces', 'default', 'people', ownerId);
    expect(readFileSync(join(ownerDir, 'owner-notes.txt'), 'utf8')).toBe('the owner secret 4242');

    const alice = await person('alice', 'member');
    fake.enqueue(
      {
        toolUses: [
          { name: 'read_file', input: { path: 'owner-notes.txt' }, id: 'toolu_al_r' },
          { name: 'list_files', input: { path: '.', recursive: true }, id: 'toolu_al_l' },
          { name: 'search_files', input: { pattern: '4242' }, id: 'toolu_al_s' },
        ],
      },
      { toolUses: [{ name: 'write_file', input: { path: 'owner-notes.txt', content: 'alice was here' }, id: 'toolu_al_w' }] },
      { text: 'alice done' },
    );
    expect((await chat(alice.ws, 'al1', 'read the owner notes')).end).toMatchObject({ type: 'final', text: 'alice done' });
    const read = resultFor('toolu_al_r');
    expect(read.is_error).toBe(true);
    expect(read.content).not.toContain('4242');
    expect(resultFor('toolu_al_l').content).not.toContain('owner-notes');
    expect(resultFor('toolu_al_s').content).toMatch(/^No matches/);
    expect(resultFor('toolu_al_w').is_error).toBeFalsy();
    // Alice wrote her own file; the owner's is untouched.
    expect(readFileSync(join(ownerDir, 'owner-notes.txt'), 'utf8')).toBe('the owner secret 4242');
    expect(readFileSync(join(gw.dataDir, 'workspaces', 'default', 'people', alice.principalId, 'owner-notes.txt'), 'utf8')).toBe('alice was here');
    expect(existsSync(join(gw.dataDir, 'workspaces', 'default', 'shared'))).toBe(false);
    alice.ws.close();
  });
});

describe('the upgrade from one workspace per agent', () => {
  it("moves the old per-agent workspace into the earliest owner's directory, once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'swb-ws-migrate-'));
    const old = join(dataDir, 'workspaces', 'default');
    mkdirSync(join(old, 'sub'), { recursive: true });
    writeFileSync(join(old, 'legacy-notes.txt'), 'from before the upgrade\n');
    writeFileSync(join(old, 'sub', 'deep.txt'), 'deep\n');
    let gw = await startGateway({ modelUrl: env.fake.url, dataDir, config: { agents: { default: { mode: 'acceptEdits' } } } });
    const ownerId = gw.credentials().principalId;
    const ownerDir = join(old, 'people', ownerId);
    await gw.waitForLog(/workspace_migrated/);
    expect(readFileSync(join(ownerDir, 'legacy-notes.txt'), 'utf8')).toBe('from before the upgrade\n');
    expect(readFileSync(join(ownerDir, 'sub', 'deep.txt'), 'utf8')).toBe('deep\n');
    expect(existsSync(join(old, 'legacy-notes.txt'))).toBe(false);

    // The owner's session finds the file where it always was, from its point of view.
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    env.fake.enqueue({ toolUses: [{ name: 'read_file', input: { path: 'legacy-notes.txt' }, id: 'toolu_legacy' }] }, { text: 'read legacy' });
    expect((await chat(ws, 'lg1', 'read my old notes')).end).toMatchObject({ type: 'final', text: 'read legacy' });
    expect(resultFor('toolu_legacy').content).toContain('from before the upgrade');
    ws.close();

    // A second start moves nothing and says nothing about it.
    gw = await gw.restart();
    await gw.waitForLog(/gateway listening/);
    expect(gw.logs().some((l) => l.includes('workspace_migrated'))).toBe(false);
    expect(readFileSync(join(ownerDir, 'legacy-notes.txt'), 'utf8')).toBe('from before the upgrade\n');
    await gw.stop();
  });
});
