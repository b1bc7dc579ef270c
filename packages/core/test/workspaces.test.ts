import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LAYOUT_MARKER, earliestOwner, encodeSegment, migrateLegacyWorkspace, workspaceDir, type Principal, type WorkspaceOwner } from '../src/index.js';

describe('workspaceDir', () => {
  it('lays out people, rooms and shared under the root', () => {
    expect(workspaceDir('/w', 'default', 'per-person', { kind: 'person', principalId: 'p1' })).toBe('/w/default/people/p1');
    expect(workspaceDir('/w', 'default', 'per-person', { kind: 'room', channel: 'slack', account: 'main', conversation: 'C1.x' })).toBe(
      '/w/default/rooms/slack/main/C1%2Ex',
    );
    expect(workspaceDir('/w', 'default', 'shared', { kind: 'person', principalId: 'p1' })).toBe('/w/default/shared');
  });

  it('encodes ".", "..", "/", "%" and NUL so that no id names anything but one directory', () => {
    expect(encodeSegment('.')).toBe('%2E');
    expect(encodeSegment('..')).toBe('%2E%2E');
    expect(encodeSegment('a/b\\c')).toBe('a%2Fb%5Cc');
    expect(encodeSegment('%2E')).toBe('%252E');
    expect(encodeSegment('\0')).toBe('%00');
    expect(encodeSegment('é')).toBe('%C3%A9');
    expect(() => encodeSegment('')).toThrow(/empty id/);
  });

  it('every short id over a hostile alphabet: distinct owners get distinct directories, none an ancestor of another', () => {
    const alphabet = ['a', 'B', '.', '/', '%', '-', '2', 'E', '\\', ' ', 'é'];
    const ids = [...alphabet];
    for (const a of alphabet) for (const b of alphabet) ids.push(a + b);
    for (const a of ['.', '%', '/']) for (const b of alphabet) for (const c of ['.', '2', 'E']) ids.push(a + b + c);
    const owners: WorkspaceOwner[] = ids.flatMap((id) => [
      { kind: 'person', principalId: id },
      { kind: 'room', channel: 'slack', account: 'main', conversation: id },
      { kind: 'room', channel: id, account: id.slice(0, 1), conversation: 'c' },
    ]);
    const dirs = new Map<string, string>();
    for (const o of owners) {
      const d = workspaceDir('/w', 'default', 'per-person', o);
      expect(d.startsWith('/w/default/')).toBe(true);
      expect(path.normalize(d)).toBe(d);
      const key = JSON.stringify(o);
      expect(dirs.get(d) ?? key).toBe(key);
      dirs.set(d, key);
    }
    for (const d of dirs.keys()) {
      for (let up = path.dirname(d); up !== '/'; up = path.dirname(up)) expect(dirs.has(up)).toBe(false);
    }
  });
});

const principal = (id: string, role: Principal['role'], at: number): Principal => ({ id, name: id, role, createdAt: new Date(at) });
const quiet = { info: () => {}, warn: () => {} };

describe('migrateLegacyWorkspace', () => {
  let data: string;
  let legacyRoot: string;
  beforeEach(() => {
    data = mkdtempSync(path.join(tmpdir(), 'swb-migrate-'));
    legacyRoot = path.join(data, 'workspaces');
    mkdirSync(path.join(legacyRoot, 'default', 'sub'), { recursive: true });
    writeFileSync(path.join(legacyRoot, 'default', 'old.txt'), 'old');
    writeFileSync(path.join(legacyRoot, 'default', 'sub', 'deep.txt'), 'deep');
    symlinkSync('old.txt', path.join(legacyRoot, 'default', 'link'));
  });
  afterEach(() => rmSync(data, { recursive: true, force: true }));

  const principals = [principal('member-1', 'member', 1), principal('owner-late', 'owner', 30), principal('owner-early', 'owner', 20)];

  it("moves everything into the earliest owner's directory, logs it, and does nothing the second time", async () => {
    const logged: unknown[] = [];
    const log = { info: (o: unknown) => logged.push(o), warn: (o: unknown) => logged.push(o) };
    const first = await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals, log });
    const dest = path.join(legacyRoot, 'default', 'people', 'owner-early');
    expect(first).toEqual({ state: 'moved', to: dest, entries: 3, kept: 0 });
    expect(readFileSync(path.join(dest, 'old.txt'), 'utf8')).toBe('old');
    expect(readFileSync(path.join(dest, 'sub', 'deep.txt'), 'utf8')).toBe('deep');
    expect(readFileSync(path.join(dest, 'link'), 'utf8')).toBe('old');
    expect(readdirSync(path.join(legacyRoot, 'default')).sort()).toEqual([LAYOUT_MARKER, 'people']);
    expect(logged).toEqual([expect.objectContaining({ event: 'workspace_migrated', principalId: 'owner-early', entries: 3 })]);
    // The owner uses the workspace; a restart must not take that for old content.
    writeFileSync(path.join(dest, 'new.txt'), 'new');
    expect(await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals, log })).toEqual({
      state: 'current',
    });
    expect(logged).toHaveLength(1);
    expect(existsSync(path.join(dest, 'new.txt'))).toBe(true);
  });

  it('a fresh install only writes the marker', async () => {
    rmSync(path.join(legacyRoot, 'default'), { recursive: true });
    expect(await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals, log: quiet })).toEqual({
      state: 'current',
    });
    expect(readdirSync(path.join(legacyRoot, 'default'))).toEqual([LAYOUT_MARKER]);
  });

  it('without an owner the content waits aside, and moves on a later start', async () => {
    const none = await migrateLegacyWorkspace({
      agentId: 'default',
      legacyRoot,
      root: legacyRoot,
      mode: 'per-person',
      principals: [principal('m', 'member', 1)],
      log: quiet,
    });
    expect(none).toEqual({ state: 'pending', at: path.join(legacyRoot, '.default.pre-people') });
    mkdirSync(path.join(legacyRoot, 'default', 'people', 'm'), { recursive: true });
    const later = await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals, log: quiet });
    expect(later).toMatchObject({ state: 'moved', to: path.join(legacyRoot, 'default', 'people', 'owner-early') });
    expect(existsSync(path.join(legacyRoot, 'default', 'people', 'm'))).toBe(true);
    expect(existsSync(path.join(legacyRoot, '.default.pre-people'))).toBe(false);
  });

  it('never overwrites: entries already at the destination stay aside', async () => {
    await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals: [], log: quiet });
    const dest = path.join(legacyRoot, 'default', 'people', 'owner-early');
    mkdirSync(dest, { recursive: true });
    writeFileSync(path.join(dest, 'old.txt'), 'newer');
    const r = await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root: legacyRoot, mode: 'per-person', principals, log: quiet });
    expect(r).toMatchObject({ state: 'moved', entries: 2, kept: 1 });
    expect(readFileSync(path.join(dest, 'old.txt'), 'utf8')).toBe('newer');
    expect(readFileSync(path.join(legacyRoot, '.default.pre-people', 'old.txt'), 'utf8')).toBe('old');
  });

  it('shared mode moves into shared/, and a separate workspaces.root is honoured', async () => {
    const root = path.join(data, 'elsewhere');
    const r = await migrateLegacyWorkspace({ agentId: 'default', legacyRoot, root, mode: 'shared', principals: [], log: quiet });
    expect(r).toMatchObject({ state: 'moved', to: path.join(root, 'default', 'shared') });
    expect(readFileSync(path.join(root, 'default', 'shared', 'old.txt'), 'utf8')).toBe('old');
  });

  it('earliestOwner picks by creation time, then id', () => {
    expect(earliestOwner(principals)?.id).toBe('owner-early');
    expect(earliestOwner([principal('b', 'owner', 5), principal('a', 'owner', 5)])?.id).toBe('a');
    expect(earliestOwner([principal('m', 'admin', 1)])).toBeUndefined();
  });
});
