import { join } from 'node:path';
import { memoryPart, PersonalData, profilePart, type Storage, workspacePart } from '@switchboard/core';
import type { Config } from '../config.js';

/**
 * What deleting a principal exports and erases: their private memories, their profile and their
 * per-person workspaces under the workspaces root (`workspaces.root`, else `<dataDir>/workspaces`).
 */
export function personalDataOf(storage: Storage, root: string): PersonalData {
  return new PersonalData([memoryPart(storage), profilePart(storage), workspacePart(root)]);
}

/** The workspaces root of a config. */
export function workspacesRootOf(cfg: Readonly<Config>): string {
  return cfg.workspaces.root ?? join(cfg.gateway.dataDir, 'workspaces');
}
