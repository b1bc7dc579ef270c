import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS, describeSystemLayout, grantSandboxGroup, type SandboxRunOptions, type SandboxLimits, UidAllocator } from '../../src/index.js';

/** Uids/gid reserved for these tests (no real account uses them here). */
export const TEST_UID_FIRST = 64_100;
export const TEST_UID_LAST = 64_103;
export const TEST_GID = 64_100;

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fake gateway data dir (0700, with a database and config) holding a workspace. */
export interface Host {
  dataDir: string;
  workspace: string;
  database: string;
  config: string;
}

/** Creates the fake data dir and a sandbox-group-writable workspace inside it. */
export async function makeHost(): Promise<Host> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sb-exec-data-'));
  cleanups.push(dataDir);
  const database = path.join(dataDir, 'gateway.db');
  const config = path.join(dataDir, 'config.json5');
  writeFileSync(database, 'SQLITE-CANARY-ROWS', { mode: 0o600 });
  writeFileSync(config, '{ token: "CONFIG-CANARY" }', { mode: 0o600 });
  const workspace = path.join(dataDir, 'workspaces', 'ws1');
  mkdirSync(workspace, { recursive: true });
  await grantSandboxGroup(workspace, TEST_GID);
  return { dataDir, workspace, database, config };
}

/** Run options for a host, with test limits. */
export async function runOptions(host: Host, limits: Partial<SandboxLimits> = {}, extra: Partial<SandboxRunOptions> = {}): Promise<SandboxRunOptions> {
  return {
    bwrapPath: '/usr/bin/bwrap',
    workspace: host.workspace,
    path: '/usr/bin:/bin',
    system: await describeSystemLayout(),
    limits: { ...DEFAULT_SANDBOX_LIMITS, cpuSeconds: 20, ...limits },
    hostIsRoot: process.getuid?.() === 0,
    uids: new UidAllocator(TEST_UID_FIRST, TEST_UID_LAST),
    gid: TEST_GID,
    progressIntervalMs: 200,
    killGraceMs: 500,
    ...extra,
  };
}

/** Host pids of every process whose real uid is `uid` (read from /proc). */
export function pidsOfUid(uid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const match = /^Uid:\s+(\d+)/m.exec(status);
      if (match && Number(match[1]) === uid) out.push(Number(name));
    } catch {
      // The process exited while we looked.
    }
  }
  return out;
}

/** Whether a pid still names a live (non-zombie) process. */
export function alive(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}
