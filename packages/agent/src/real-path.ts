import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

// Linux's own limit on symlinks followed while resolving one path.
const MAX_LINK_HOPS = 40;

/**
 * `realpath` for a path that may not exist yet: resolves the deepest existing ancestor and
 * appends the rest, and follows a dangling symlink to where a write would land. Shared by the
 * file tools (confinement) and the permission layer (rules on real paths), so both agree on
 * where a path leads.
 *
 * @throws the fs error for anything but a missing component (`ELOOP` after 40 links).
 */
export async function resolveRealPath(p: string, hops = 0): Promise<{ path: string; exists: boolean }> {
  try {
    return { path: await realpath(p), exists: true };
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return { path: p, exists: false };
  const dir = (await resolveRealPath(parent, hops)).path;
  const candidate = path.join(dir, path.basename(p));
  const st = await lstat(candidate).catch((err: unknown) => {
    if (isMissing(err)) return undefined;
    throw err;
  });
  if (!st?.isSymbolicLink()) return { path: candidate, exists: false };
  if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
  const target = path.resolve(dir, await readlink(candidate));
  return { path: (await resolveRealPath(target, hops + 1)).path, exists: false };
}

/**
 * {@link resolveRealPath}, synchronously, for checks that must not await (the exec command
 * checks): the same deepest-existing-ancestor and dangling-symlink rules, the same hop limit.
 *
 * @throws the fs error for anything but a missing component (`ELOOP` after 40 links).
 */
export function resolveRealPathSync(p: string, hops = 0): { path: string; exists: boolean } {
  try {
    return { path: realpathSync(p), exists: true };
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return { path: p, exists: false };
  const dir = resolveRealPathSync(parent, hops).path;
  const candidate = path.join(dir, path.basename(p));
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = lstatSync(candidate);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  if (!st?.isSymbolicLink()) return { path: candidate, exists: false };
  if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
  const target = path.resolve(dir, readlinkSync(candidate));
  return { path: resolveRealPathSync(target, hops + 1).path, exists: false };
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
