/**
 * Workspace ownership for the sandbox group, with real bubblewrap (the gateway runs as root here):
 * what write_file/edit_file create is usable by every sandbox uid of the group, what one run
 * creates is changeable by the next run's (other) uid, and nothing else is opened up.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ToolContext } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { createEditFileTool, createWriteFileTool, grantSandboxGroup, prepareWorkspaceForSandbox, runSandboxed, UidAllocator } from '../../src/index.js';
import { makeHost, runOptions, TEST_GID, TEST_UID_FIRST } from './helpers.js';

const BOUND = { timeoutMs: 30_000 };
const UID_A = TEST_UID_FIRST;
const UID_B = TEST_UID_FIRST + 1;

function ctx(workspace: string): ToolContext {
  return { signal: new AbortController().signal, toolUseId: 'tu_1', sessionId: 's', turnId: 't', agentId: 'a', workspace };
}

/** A workspace as the gateway makes it: root-owned 0755, not yet given to the sandbox group. */
async function plainWorkspace() {
  const host = await makeHost();
  chownSync(host.workspace, 0, 0);
  chmodSync(host.workspace, 0o755);
  return host;
}

// Like every real-bwrap test here (makeHost gives the workspace the test group), these need root:
// the gateway's uid drop and chown are root's. CI runs as root; they are never skipped.
describe('sandbox group ownership (real bwrap, gateway as root)', () => {
  it('write_file → uid A reads and appends → A creates b.txt → uid B changes it; a 0600 file of the gateway stays unreadable', async () => {
    const host = await plainWorkspace();
    const ws = host.workspace;
    const write = createWriteFileTool({ sandboxGroup: TEST_GID });
    await write.call({ path: 'a.txt', content: 'from write_file\n' }, ctx(ws));
    await write.call({ path: 'deep/er/c.txt', content: 'nested\n' }, ctx(ws));
    writeFileSync(path.join(ws, 'private.txt'), 'GATEWAY-ONLY\n', { mode: 0o600 });

    const a = statSync(path.join(ws, 'a.txt'));
    expect([a.uid, a.gid, a.mode & 0o070]).toEqual([0, TEST_GID, 0o060]);
    for (const dir of ['deep', 'deep/er']) {
      const info = statSync(path.join(ws, dir));
      expect([info.gid, info.mode & 0o2070]).toEqual([TEST_GID, 0o2070]);
    }

    const asA = await runOptions(host, {}, { uids: new UidAllocator(UID_A, UID_A) });
    const first = await runSandboxed(
      asA,
      'cat a.txt && echo appended >> a.txt && echo made-by-a > b.txt && echo more > deep/er/d.txt && cat private.txt; echo "rc=$?"',
      BOUND,
    );
    expect(first.uid).toBe(UID_A);
    expect(first.output).toContain('from write_file\n');
    expect(first.output).toContain('Permission denied');
    expect(first.output).not.toContain('GATEWAY-ONLY');
    expect(first.output).toContain('rc=1');
    expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('from write_file\nappended\n');
    const b = statSync(path.join(ws, 'b.txt'));
    // umask 0002 in the sandbox and the setgid root: group G, group-writable.
    expect([b.uid, b.gid, b.mode & 0o070]).toEqual([UID_A, TEST_GID, 0o060]);
    expect(statSync(path.join(ws, 'deep/er/d.txt')).gid).toBe(TEST_GID);
    // No blanket chmod: the gateway's private file is as it was.
    const priv = statSync(path.join(ws, 'private.txt'));
    expect([priv.uid, priv.gid, priv.mode & 0o777]).toEqual([0, 0, 0o600]);

    const asB = await runOptions(host, {}, { uids: new UidAllocator(UID_B, UID_B) });
    const second = await runSandboxed(asB, 'echo changed-by-b >> b.txt && echo ok', BOUND);
    expect(second.uid).toBe(UID_B);
    expect(second.output).toBe('ok\n');
    expect(readFileSync(path.join(ws, 'b.txt'), 'utf8')).toBe('made-by-a\nchanged-by-b\n');

    // edit_file replaces b.txt (a new inode written by root) keeping A's ownership and mode.
    await createEditFileTool({ sandboxGroup: TEST_GID }).call({ path: 'b.txt', old_string: 'made-by-a', new_string: 'edited', replaceAll: false }, ctx(ws));
    const edited = statSync(path.join(ws, 'b.txt'));
    expect([edited.uid, edited.gid, edited.mode & 0o777]).toEqual([UID_A, TEST_GID, b.mode & 0o777]);
    const third = await runSandboxed(asB, 'echo again >> b.txt && cat b.txt', BOUND);
    expect(third.output).toBe('edited\nchanged-by-b\nagain\n');
  });

  it('without sandboxGroup the file tools change no ownership (a sandbox uid cannot append)', async () => {
    const host = await plainWorkspace();
    await createWriteFileTool().call({ path: 'a.txt', content: 'x\n' }, ctx(host.workspace));
    expect(statSync(path.join(host.workspace, 'a.txt')).gid).toBe(0);
    const result = await runSandboxed(await runOptions(host), 'cat a.txt; echo y >> a.txt', BOUND);
    expect(result.output).toContain('x\n');
    expect(result.output).toContain('Permission denied');
  });

  it('the runner gives the workspace root the group (g+rwx, setgid) before the run, and never its parent', async () => {
    const host = await plainWorkspace();
    const parent = path.dirname(host.workspace);
    const before = statSync(parent);
    const result = await runSandboxed(await runOptions(host), 'touch new.txt && echo ok', BOUND);
    expect(result.output).toBe('ok\n');
    const root = statSync(host.workspace);
    expect([root.gid, root.mode & 0o7777]).toEqual([TEST_GID, 0o2775]);
    const after = statSync(parent);
    expect([after.uid, after.gid, after.mode]).toEqual([before.uid, before.gid, before.mode]);
  });
});

describe('prepareWorkspaceForSandbox and grantSandboxGroup never follow symlinks', () => {
  it('refuse a symlinked workspace root and a symlinked entry, leaving the target untouched', async () => {
    const host = await plainWorkspace();
    const target = path.join(host.dataDir, 'elsewhere');
    mkdirSync(target, { mode: 0o700 });
    writeFileSync(path.join(target, 'f'), 'x', { mode: 0o600 });
    const linkRoot = path.join(host.dataDir, 'linked-ws');
    symlinkSync(target, linkRoot);
    await expect(prepareWorkspaceForSandbox(linkRoot, TEST_GID)).rejects.toThrow(/symlink/);
    const entry = path.join(host.workspace, 'link');
    symlinkSync(path.join(target, 'f'), entry);
    await expect(grantSandboxGroup(entry, TEST_GID)).rejects.toThrow(/symlink/);
    expect(lstatSync(entry).isSymbolicLink()).toBe(true);
    for (const p of [target, path.join(target, 'f')]) expect(statSync(p).gid).toBe(0);
    expect(statSync(target).mode & 0o777).toBe(0o700);
  });
});
