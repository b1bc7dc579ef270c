import { mkdir } from 'node:fs/promises';
import path from 'node:path';

/** How an agent's file tools are split between people: `per-person` (the default) or one `shared` directory. */
export type WorkspaceMode = 'per-person' | 'shared';

/** Whose workspace a turn works in. */
export type WorkspaceOwner = { kind: 'person'; principalId: string } | { kind: 'room'; channel: string; account: string; conversation: string };

/**
 * One path segment from an outside id: every byte except `A-Z a-z 0-9 _ -` percent-encoded
 * (UTF-8), so `.`, `..`, `/`, `\` and NUL cannot name anything but one plain directory.
 *
 * @throws {Error} for an empty id (it would name the parent directory).
 */
export function encodeSegment(id: string): string {
  if (id === '') throw new Error('an empty id cannot name a workspace directory');
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/u.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The directory a turn works in, under `root` (`workspaces.root`):
 * - `shared` mode: `<root>/<agent>/shared/` for everyone;
 * - `per-person`: `<root>/<agent>/people/<principalId>/` for a person's direct messages, and
 *   `<root>/<agent>/rooms/<channel>/<account>/<conversation>/` for a room.
 *
 * Every id is one {@link encodeSegment}ed segment, and each kind has its own fixed depth under
 * its own top directory, so no workspace is an ancestor of another.
 */
export function workspaceDir(root: string, agentId: string, mode: WorkspaceMode, owner: WorkspaceOwner): string {
  const agentDir = path.join(root, encodeSegment(agentId));
  if (mode === 'shared') return path.join(agentDir, 'shared');
  if (owner.kind === 'person') return path.join(agentDir, 'people', encodeSegment(owner.principalId));
  return path.join(agentDir, 'rooms', encodeSegment(owner.channel), encodeSegment(owner.account), encodeSegment(owner.conversation));
}

/** Options of {@link WorkspaceDirectories}. */
export interface WorkspaceDirectoriesOptions {
  /** `workspaces.root`: every workspace lives under it. */
  root: string;
  /** `agents.<id>.workspace.mode` (an agent not listed is `per-person`). */
  modeOf(agentId: string): WorkspaceMode;
}

/** Finds, and creates on first use (mode 0700), the workspace of a turn. */
export class WorkspaceDirectories {
  private readonly made = new Set<string>();

  constructor(private readonly options: WorkspaceDirectoriesOptions) {}

  /** The workspace directory of `owner` for `agentId`, created if missing. */
  async ensure(agentId: string, owner: WorkspaceOwner): Promise<string> {
    const dir = workspaceDir(this.options.root, agentId, this.options.modeOf(agentId), owner);
    if (!this.made.has(dir)) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (this.made.size >= 10_000) this.made.clear();
      this.made.add(dir);
    }
    return dir;
  }

  /**
   * A directory no file tool can use (it is never created): the workspace of a turn whose sender
   * gets no file tools, so that a tool that slipped through finds no workspace.
   */
  none(agentId: string): string {
    return path.join(this.options.root, encodeSegment(agentId), 'no-workspace');
  }
}
