import { isPermissionMode, type PermissionMode } from '../permissions/modes.js';
import type { Storage } from '../storage.js';

/**
 * Principal-scope permission modes, set by operators through the control API. They are kept in
 * the operators' override table (`policy_overrides`), under the key `principal:<id>` and the
 * field `mode` — beside the channel accounts' overrides (`<type>:<account>`), which no channel
 * type can collide with.
 */
const key = (principalId: string) => `principal:${principalId}`;
const FIELD = 'mode';

/** The mode an operator set for a principal, if any. */
export async function principalMode(storage: Storage, principalId: string): Promise<PermissionMode | undefined> {
  const row = (await storage.policies.list(key(principalId))).find((o) => o.field === FIELD);
  return row && isPermissionMode(row.value) ? row.value : undefined;
}

/** Sets (or, with null, removes) a principal's mode (the caller audits it). */
export async function setPrincipalMode(storage: Storage, principalId: string, mode: PermissionMode | null, by: string): Promise<void> {
  if (mode === null) await storage.policies.remove(key(principalId), FIELD);
  else await storage.policies.set(key(principalId), FIELD, mode, by);
}
