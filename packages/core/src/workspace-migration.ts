import { cp, lstat, mkdir, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Principal } from './storage.js';
import { encodeSegment, workspaceDir, type WorkspaceMode } from './workspaces.js';

/** The file, in `<root>/<agent>/`, that says the directory has the per-person layout. */
export const LAYOUT_MARKER = '.switchboard-layout.json';

/** Inputs of {@link migrateLegacyWorkspace}. */
export interface LegacyWorkspaceMigration {
  agentId: string;
  /** `<dataDir>/workspaces`: where the single per-agent workspaces used to be. */
  legacyRoot: string;
  /** `workspaces.root`. */
  root: string;
  mode: WorkspaceMode;
  /** Every principal (the earliest-created owner receives the old content). */
  principals: readonly Principal[];
  log: Pick<Logger, 'info' | 'warn'>;
}

/** What {@link migrateLegacyWorkspace} did. */
export type MigrationOutcome = { state: 'current' } | { state: 'moved'; to: string; entries: number; kept: number } | { state: 'pending'; at: string };

/**
 * Moves the content of an agent's old single workspace (`<dataDir>/workspaces/<agent>/`) into
 * the new layout, once: into the earliest-created owner's directory (`people/<id>/`), or into
 * `shared/` in shared mode. Idempotent and safe to interrupt:
 *
 * 1. Without the layout marker, a non-empty old directory is first renamed aside, to
 *    `<dataDir>/workspaces/.<agent>.pre-people`, then the marker is written (so the new
 *    directories created later are never taken for old content).
 * 2. While that directory exists it is moved into place (one rename when the destination is
 *    new; entry by entry, never overwriting, when it exists). Without an owner yet it waits for
 *    a later start (`pending`, logged).
 *
 * Logs `workspace_migrated` when content moved.
 */
export async function migrateLegacyWorkspace(m: LegacyWorkspaceMigration): Promise<MigrationOutcome> {
  const legacyDir = path.join(m.legacyRoot, m.agentId);
  const agentDir = path.join(m.root, encodeSegment(m.agentId));
  const aside = path.join(m.legacyRoot, `.${m.agentId}.pre-people`);
  const marker = path.join(agentDir, LAYOUT_MARKER);
  if (!(await exists(marker))) {
    if (!(await exists(aside)) && (await nonEmpty(legacyDir))) await rename(legacyDir, aside);
    await mkdir(agentDir, { recursive: true, mode: 0o700 });
    await writeFile(marker, `${JSON.stringify({ layout: 'per-person', version: 1 })}\n`, { mode: 0o600 });
  }
  if (!(await exists(aside))) return { state: 'current' };
  const owner = earliestOwner(m.principals);
  if (m.mode === 'per-person' && !owner) {
    m.log.warn({ event: 'workspace_migration_pending', agent: m.agentId, at: aside }, 'the old workspace waits for an owner to move into');
    return { state: 'pending', at: aside };
  }
  const to = workspaceDir(m.root, m.agentId, m.mode, { kind: 'person', principalId: owner?.id ?? '' });
  const moved = await moveInto(aside, to);
  m.log.info(
    {
      event: 'workspace_migrated',
      agent: m.agentId,
      to,
      ...(owner && m.mode === 'per-person' ? { principalId: owner.id } : {}),
      entries: moved.entries,
      kept: moved.kept,
    },
    moved.kept > 0
      ? `old workspace moved; ${moved.kept} entries that already existed at the destination were left in ${aside}`
      : 'old workspace moved into the new layout',
  );
  return { state: 'moved', to, ...moved };
}

/** The owner created first (ties broken by id), if any. */
export function earliestOwner(principals: readonly Principal[]): Principal | undefined {
  return principals
    .filter((p) => p.role === 'owner')
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
}

async function moveInto(from: string, to: string): Promise<{ entries: number; kept: number }> {
  const names = await readdir(from);
  if (!(await exists(to))) {
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    await move(from, to);
    return { entries: names.length, kept: 0 };
  }
  let kept = 0;
  for (const name of names) {
    if (await exists(path.join(to, name))) kept++;
    else await move(path.join(from, name), path.join(to, name));
  }
  if (kept === 0) await rmdir(from);
  return { entries: names.length - kept, kept };
}

// rename, or copy and remove when the destination is on another filesystem.
async function move(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EXDEV') throw err;
    await cp(from, to, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true, preserveTimestamps: true });
    await rm(from, { recursive: true });
  }
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    (err: unknown) => {
      if ((err as { code?: string }).code === 'ENOENT') return false;
      throw err;
    },
  );
}

async function nonEmpty(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length > 0;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return false;
    throw err;
  }
}
