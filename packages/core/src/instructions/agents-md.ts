import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Storage } from '../storage.js';

/**
 * The person's `AGENTS.md` files (docs/instructions.md, "AGENTS.md and approvals"): read confined
 * to the workspace (no symlinks, regular files only), capped for the model, and loaded only when
 * their content is the content a person approved. The store keeps the sha256 of the last approved
 * content per workspace file; an approved file-tool write records the hash of what it wrote, so
 * only a change that came from elsewhere (an exec run, a process outside the gateway) asks.
 */

/** The file name the loader reads (exactly this spelling). */
export const AGENTS_MD = 'AGENTS.md';

/** A file larger than this is never loaded (nor hashed): instructions are short. */
export const AGENTS_MD_MAX_FILE_BYTES = 1024 * 1024;

/** One instruction file as read. */
export interface InstructionFile {
  /** Workspace-relative, `/`-separated (`AGENTS.md`, `docs/AGENTS.md`). */
  path: string;
  /** The head the model sees: at most the cap, cut at a character boundary. */
  text: string;
  truncated: boolean;
  /** sha256 (hex) of the whole file. */
  sha256: string;
}

/** The cut of `bytes` at `max` bytes without splitting a UTF-8 character. */
function utf8Head(bytes: Buffer, max: number): string {
  if (bytes.length <= max) return bytes.toString('utf8');
  let end = max;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** Whether `child` (a real path) is `root` or inside it. */
function inside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}

/**
 * Reads `<workspace>/<dir>/AGENTS.md` (`dir` workspace-relative, `''` for the root); null when
 * there is none, it is empty or blank, it is not a regular file, it is a symlink, its folder leads outside the
 * workspace, or it is larger than {@link AGENTS_MD_MAX_FILE_BYTES}.
 */
export async function readAgentsMd(workspace: string, dir: string, maxBytes: number): Promise<InstructionFile | null> {
  const path = dir === '' ? AGENTS_MD : `${dir}/${AGENTS_MD}`;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    const root = await realpath(workspace);
    const folder = await realpath(join(workspace, dir));
    if (!inside(root, folder)) return null;
    handle = await open(join(folder, AGENTS_MD), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > AGENTS_MD_MAX_FILE_BYTES) return null;
    const bytes = await handle.readFile();
    if (bytes.length > AGENTS_MD_MAX_FILE_BYTES) return null;
    // An empty file is no instructions (the exec sandbox creates the root one empty to bind it read-only).
    if (bytes.toString('utf8').trim() === '') return null;
    const text = utf8Head(bytes, maxBytes);
    return { path, text, truncated: bytes.length > maxBytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Asks the person whether an instruction file they have not approved in this form may be loaded (an approval with source `safety`). */
export type AskToLoad = (file: InstructionFile, reason: string) => Promise<boolean>;

/** What an {@link InstructionGate} works with. */
export interface InstructionGateOptions {
  workspace: string;
  /** The cap of the text the model sees, in bytes. */
  maxBytes: number;
  files: Storage['instructionFiles'];
  ask: AskToLoad;
}

/** Loads a workspace's `AGENTS.md` files only in a form a person approved. */
export class InstructionGate {
  constructor(private readonly options: InstructionGateOptions) {}

  /**
   * The `AGENTS.md` of `dir` when its content is approved — already, or now by the person (who is
   * asked when the content's hash is not the one recorded). Null when there is none or it was declined.
   */
  async load(dir: string): Promise<InstructionFile | null> {
    const { workspace, maxBytes, files, ask } = this.options;
    const file = await readAgentsMd(workspace, dir, maxBytes);
    if (!file) return null;
    const approved = await files.approved(workspace, file.path);
    if (approved === file.sha256) return file;
    const reason =
      approved === null
        ? `${file.path} has not been loaded before: it would become instructions to the assistant`
        : `${file.path} changed since it was last approved, and not through an approved file-tool write (an exec run or another program changed it)`;
    if (!(await ask(file, reason))) return null;
    await files.approve(workspace, file.path, file.sha256);
    return file;
  }

  /** Records the current content of `<dir>/AGENTS.md` as approved (after an approved file-tool write to it). */
  async recordWrite(dir: string): Promise<void> {
    const file = await readAgentsMd(this.options.workspace, dir, this.options.maxBytes);
    if (file) await this.options.files.approve(this.options.workspace, file.path, file.sha256);
  }
}
