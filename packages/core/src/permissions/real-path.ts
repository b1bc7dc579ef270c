import path from 'node:path';
import { resolveRealPath, SwbError, SwbErrorCode } from '@switchboard/agent';

/** Thrown when a path's real location cannot be found (a loop, a permission error, …). */
export class RealPathError extends SwbError {
  constructor(
    readonly userPath: string,
    readonly detail: string,
  ) {
    super(SwbErrorCode.RealPath, `the real location of ${userPath} could not be found (${detail})`);
    this.name = 'RealPathError';
  }
}

/**
 * Where a path the model named really leads, in the same form the rules see the path as
 * written: relative to the workspace's **real** root, `/`-separated, `.` for the root itself. A
 * path that does not exist yet resolves to the real path of its deepest existing parent plus
 * the rest; a dangling symlink is followed to where a write would land. A real path outside the
 * workspace (which the file tools refuse anyway) is returned absolute, so relative rules cannot
 * match it and the safety checks see it whole.
 *
 * @throws {RealPathError} when the path cannot be resolved for another reason than not existing.
 */
export async function realRuleContent(userPath: string, workspace: string): Promise<string> {
  try {
    // A workspace not created yet has no links in it: its real root is resolved like any path.
    const root = (await resolveRealPath(path.resolve(workspace))).path;
    const target = (await resolveRealPath(path.resolve(workspace, userPath))).path;
    const rel = path.relative(root, target);
    if (rel === '') return '.';
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return target.split(path.sep).join('/');
    return rel.split(path.sep).join('/');
  } catch (err) {
    throw new RealPathError(userPath, codeOf(err) ?? (err instanceof Error ? err.message : String(err)));
  }
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
