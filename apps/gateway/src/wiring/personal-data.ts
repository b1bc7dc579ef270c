import { join } from 'node:path';
import { memoryPart, PersonalData, type Storage, workspacePart } from '@switchboard/core';
import type { Config } from '../config.js';

/**
 * What deleting a principal exports and erases: their private memories and their per-person
 * workspaces under `workspaces.root`. More parts (profiles) join with `PersonalData.add`.
 */
export function personalDataOf(cfg: Readonly<Config>, storage: Storage): PersonalData {
  const root = cfg.workspaces.root ?? join(cfg.gateway.dataDir, 'workspaces');
  return new PersonalData([memoryPart(storage), workspacePart(root)]);
}
