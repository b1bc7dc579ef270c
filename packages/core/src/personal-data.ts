import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Storage } from './storage.js';
import { encodeSegment } from './workspaces.js';

/**
 * One kind of data kept about a person, which a principal's deletion exports and then erases: a
 * hook point (memories and the workspace are built in; profiles join with one more part).
 */
export interface PersonalDataPart {
  /** Its key in the export (`memories`, `workspace`, `profile`). */
  readonly name: string;
  /** The person's data of this kind, as JSON-safe values. */
  export(principalId: string): Promise<unknown>;
  /** Deletes it; answers what was deleted (counts, for the audit). Must be idempotent. */
  erase(principalId: string): Promise<unknown>;
}

/** What `GET /principals/{id}/export` answers, besides the principal itself. */
export type PersonalExport = Record<string, unknown>;

/** A principal's personal data across its parts: exported together, erased together (in order). */
export class PersonalData {
  constructor(private readonly parts: readonly PersonalDataPart[]) {}

  /** Every part's export, by name. */
  async export(principalId: string): Promise<PersonalExport> {
    const out: PersonalExport = {};
    for (const part of this.parts) out[part.name] = await part.export(principalId);
    return out;
  }

  /** Erases every part, in order; answers each part's summary by name. Rejects with the first part that fails (later parts are not run). */
  async erase(principalId: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const part of this.parts) out[part.name] = await part.erase(principalId);
    return out;
  }
}

/** The person's private memories (team memories they saved stay: they are the team's). */
export function memoryPart(storage: Pick<Storage, 'memories'>): PersonalDataPart {
  const all = async (principalId: string) => {
    const scopes = [{ scope: 'private' as const, principalId }];
    const out = [];
    for (let offset = 0; ; offset += 50) {
      const page = await storage.memories.list(scopes, { limit: 50, offset });
      out.push(...page);
      if (page.length < 50) return out;
    }
  };
  return {
    name: 'memories',
    export: async (principalId) => (await all(principalId)).map((m) => ({ id: m.id, text: m.text, tags: m.tags, createdAt: m.createdAt.toISOString() })),
    erase: async (principalId) => ({ deleted: await storage.memories.deleteOfPrincipal(principalId) }),
  };
}

/** The person's profile (`/profile`): exported, then erased (the row also goes with the principal by cascade). */
export function profilePart(storage: Pick<Storage, 'profiles'>): PersonalDataPart {
  return {
    name: 'profile',
    export: async (principalId) => {
      const stored = await storage.profiles.get(principalId);
      return stored ? { ...stored.profile, updatedBy: stored.updatedBy, updatedAt: stored.updatedAt.toISOString() } : null;
    },
    erase: async (principalId) => ({ erased: await storage.profiles.put(principalId, {}, 'deletion') }),
  };
}

/** The most files a workspace export lists. */
const EXPORT_MAX_FILES = 10_000;

/** The person's workspace directories under `root`: `<root>/<agent>/people/<principal>/` of every agent there is a directory for. */
export async function personWorkspaces(root: string, principalId: string): Promise<string[]> {
  let agents: string[];
  try {
    agents = await readdir(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const agent of agents) {
    const dir = path.join(root, agent, 'people', encodeSegment(principalId));
    const st = await lstat(dir).catch(() => null);
    if (st?.isDirectory()) out.push(dir);
  }
  return out;
}

async function listFiles(dir: string, base: string, out: Array<{ path: string; bytes: number }>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (out.length >= EXPORT_MAX_FILES) return;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await listFiles(full, base, out);
    else if (entry.isFile()) out.push({ path: path.relative(base, full).split(path.sep).join('/'), bytes: (await lstat(full)).size });
  }
}

/**
 * The person's per-person workspaces (every agent's, under `root`): the export lists their files
 * (agent directory, path and size — not the contents, which the operator copies from disk if
 * needed); erasing removes the directories.
 */
export function workspacePart(root: string): PersonalDataPart {
  return {
    name: 'workspace',
    export: async (principalId) => {
      const dirs = await personWorkspaces(root, principalId);
      return Promise.all(
        dirs.map(async (dir) => {
          const files: Array<{ path: string; bytes: number }> = [];
          await listFiles(dir, dir, files);
          return { agent: path.basename(path.dirname(path.dirname(dir))), files };
        }),
      );
    },
    erase: async (principalId) => {
      const dirs = await personWorkspaces(root, principalId);
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
      return { directories: dirs.length };
    },
  };
}
