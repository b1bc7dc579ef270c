import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WsFrame } from '@switchboard/testkit';
import { chat, collectTurn, isEnd, useGateway, toolResultFor } from './helpers.js';

// Bypass mode: nothing is asked except what the safety checks and ask rules insist on.
const env = useGateway({
  config: {
    agents: { default: { mode: 'bypassPermissions' } },
    permissions: { deny: ['write_file(protected/**)', 'read_file(protected/**)', 'group:fs(hr/**)'] },
  },
  client: true,
});
let workspace: string;

const resultFor = (id: string) => toolResultFor(env.fake, id);

/** Finds the directory (under the data dir's workspaces) that holds `name`. */
function findDirHolding(root: string, name: string): string | undefined {
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name === name) return e.parentPath;
  }
  return undefined;
}

/** Sends a message and waits for the first approval request or the end of the turn. */
async function firstStop(clientId: string, text: string): Promise<WsFrame> {
  env.ws.send({ type: 'message', clientId, text });
  return env.ws.next((f) => f.clientId === clientId && (f.type === 'approval_request' || isEnd(f)));
}

beforeAll(async () => {
  const { fake, ws } = env;
  await ws.next((f) => f.type === 'hello_ok');
  // Where the owner's session works: wherever its first write lands.
  fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'probe-paths.txt', content: 'probe' }, id: 'toolu_probe' }] }, { text: 'probed' });
  const turn = await chat(ws, 'probe', 'write the probe');
  expect(turn.end).toMatchObject({ type: 'final', text: 'probed' });
  workspace = findDirHolding(join(env.gw.dataDir, 'workspaces'), 'probe-paths.txt')!;
  expect(workspace).toBeDefined();
  // A cloned repository can carry a link to its own .git.
  mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(workspace, '.git', 'config'), '[core]\n\tbare = false\n');
  symlinkSync('.git', join(workspace, 'gl'));
  mkdirSync(join(workspace, 'protected'));
  writeFileSync(join(workspace, 'protected', 'secret.txt'), 'protected content\n');
  symlinkSync('protected', join(workspace, 'p2'));
  mkdirSync(join(workspace, 'hr'));
  writeFileSync(join(workspace, 'hr', 'salaries.txt'), 'salary of bob: 123456\n');
  writeFileSync(join(workspace, 'team.txt'), 'salary talks are on friday\n');
  writeFileSync(join(workspace, 'original.txt'), 'original\n');
  linkSync(join(workspace, 'original.txt'), join(workspace, 'hardlink.txt'));
});

describe('symlinks inside the workspace do not get around the safety checks or rules', () => {
  it('write_file through gl -> .git needs approval even in bypassPermissions mode', async () => {
    const { fake, ws } = env;
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'gl/hooks/pre-commit', content: '#!/bin/sh\necho pwned\n' }, id: 'toolu_gl_w' }] },
      { text: 'hook step done' },
    );
    const stop = await firstStop('gl1', 'install the hook');
    expect(stop.type).toBe('approval_request');
    expect(stop.summary).toMatch(/\.git\//);
    expect(existsSync(join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    ws.send({ type: 'approve', approvalId: stop.approvalId, decision: 'deny' });
    const turn = await collectTurn(ws, 'gl1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'hook step done' });
    expect(existsSync(join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('edit_file through gl -> .git needs approval even in bypassPermissions mode', async () => {
    const { fake, ws } = env;
    fake.enqueue(
      {
        toolUses: [
          { name: 'edit_file', input: { path: 'gl/config', old_string: 'bare = false', new_string: 'bare = false\n\tfsmonitor = ./x' }, id: 'toolu_gl_e' },
        ],
      },
      { text: 'config step done' },
    );
    const stop = await firstStop('gl2', 'edit the config');
    expect(stop.type).toBe('approval_request');
    ws.send({ type: 'approve', approvalId: stop.approvalId, decision: 'deny' });
    await collectTurn(ws, 'gl2');
    expect(readFileSync(join(workspace, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  it('p2 -> protected honours read_file(protected/**) and write_file(protected/**)', async () => {
    const { fake } = env;
    fake.enqueue(
      {
        toolUses: [
          { name: 'read_file', input: { path: 'p2/secret.txt' }, id: 'toolu_p2_r' },
          { name: 'write_file', input: { path: 'p2/planted.txt', content: 'x' }, id: 'toolu_p2_w' },
          // An allowed call in between, so the denials do not end the turn (three in a row would).
          { name: 'read_file', input: { path: 'team.txt' }, id: 'toolu_p2_ok' },
          { name: 'write_file', input: { path: 'p2/secret.txt', content: 'overwritten' }, id: 'toolu_p2_o' },
        ],
      },
      { text: 'p2 done' },
    );
    const turn = await chat(env.ws, 'p2a', 'use p2');
    expect(turn.end).toMatchObject({ type: 'final', text: 'p2 done' });
    for (const id of ['toolu_p2_r', 'toolu_p2_w', 'toolu_p2_o']) {
      const r = resultFor(id);
      expect(r.is_error).toBe(true);
      expect(r.content).toMatch(/protected\/\*\*/);
      expect(r.content).not.toContain('protected content');
    }
    expect(existsSync(join(workspace, 'protected', 'planted.txt'))).toBe(false);
    expect(readFileSync(join(workspace, 'protected', 'secret.txt'), 'utf8')).toBe('protected content\n');
  });

  it('a file with more than one hard link can be read but not written or edited', async () => {
    const { fake } = env;
    fake.enqueue(
      {
        toolUses: [
          { name: 'read_file', input: { path: 'hardlink.txt' }, id: 'toolu_hl_r' },
          { name: 'write_file', input: { path: 'hardlink.txt', content: 'changed' }, id: 'toolu_hl_w' },
          { name: 'edit_file', input: { path: 'hardlink.txt', old_string: 'original', new_string: 'edited' }, id: 'toolu_hl_e' },
        ],
      },
      { text: 'links done' },
    );
    const turn = await chat(env.ws, 'hl1', 'change the linked file');
    expect(turn.end).toMatchObject({ type: 'final', text: 'links done' });
    expect(resultFor('toolu_hl_r').is_error).toBeFalsy();
    expect(resultFor('toolu_hl_r').content).toContain('original');
    for (const id of ['toolu_hl_w', 'toolu_hl_e']) {
      const r = resultFor(id);
      expect(r.is_error).toBe(true);
      expect(r.content).toMatch(/hard link/);
    }
    expect(readFileSync(join(workspace, 'hardlink.txt'), 'utf8')).toBe('original\n');
    expect(readFileSync(join(workspace, 'original.txt'), 'utf8')).toBe('original\n');
  });
});

describe('walks from a parent honour directory deny rules', () => {
  it('search_files and list_files from "." withhold hr/** and say so without naming it', async () => {
    const { fake } = env;
    fake.enqueue(
      {
        toolUses: [
          { name: 'search_files', input: { pattern: 'salary', path: '.' }, id: 'toolu_walk_s' },
          { name: 'list_files', input: { path: '.', recursive: true }, id: 'toolu_walk_l' },
        ],
      },
      { text: 'walked' },
    );
    const turn = await chat(env.ws, 'walk1', 'search for salaries');
    expect(turn.end).toMatchObject({ type: 'final', text: 'walked' });
    const search = resultFor('toolu_walk_s');
    expect(search.is_error).toBeFalsy();
    expect(search.content).toContain('team.txt:1: salary talks');
    expect(search.content).not.toContain('123456');
    expect(search.content).not.toContain('salaries');
    expect(search.content).toMatch(/withheld by (the )?permission rules/);
    const list = resultFor('toolu_walk_l');
    expect(list.is_error).toBeFalsy();
    expect(list.content).toContain('team.txt');
    expect(list.content).not.toContain('salaries');
    expect(list.content).not.toMatch(/^hr\/?$/m);
    expect(list.content).toMatch(/withheld by (the )?permission rules/);
  });
});
