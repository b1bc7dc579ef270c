import { SwbErrorCode } from '@switchboard/agent';
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { FileToolError, errnoCode, fsError, hardLinkError } from './errors.js';
import { grantSandboxGroup } from './exec/layout.js';
import { formatBytes } from './text-file.js';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /**
   * The exec sandbox's group (the gateway runs as root): a new file gets this group with group
   * read/write; a replaced file keeps its owner, group and mode. Default: nothing changed.
   */
  sandboxGroup?: number;
}

/**
 * Creates `dir` and its missing parents; with `sandboxGroup`, every folder this call created gets
 * that group with group read/write/search and setgid (`grantSandboxGroup`). Folders that already
 * existed are left as they are. `rel` names the file in error messages.
 */
export async function makeParentDirs(dir: string, rel: string, sandboxGroup?: number): Promise<void> {
  try {
    const first = await mkdir(dir, { recursive: true });
    if (sandboxGroup === undefined || first === undefined) return;
    let current = first;
    await grantSandboxGroup(current, sandboxGroup);
    const below = path.relative(first, dir);
    for (const segment of below === '' ? [] : below.split(path.sep)) {
      current = path.join(current, segment);
      await grantSandboxGroup(current, sandboxGroup);
    }
  } catch (err) {
    throw fsError(err, rel);
  }
}

/**
 * Writes `content` to `real` atomically: a temp file in the same directory, fsynced, then renamed
 * over the target, so readers see the old or the new file, never half of one. An existing file's
 * permission bits are kept. Content over `maxBytes`, and an existing file with more than one
 * hard link, are refused. `rel` names the file in error
 * messages. With `sandboxGroup` (see {@link AtomicWriteOptions}) a new file gets that group with
 * group read/write, and a replaced one keeps its owner and group. Returns the bytes written.
 */
export async function writeFileAtomic(real: string, rel: string, content: string, maxBytes: number, options: AtomicWriteOptions = {}): Promise<number> {
  const data = Buffer.from(content, 'utf8');
  if (data.length > maxBytes) {
    throw new FileToolError(
      SwbErrorCode.FileTooLarge,
      `the new content of ${rel} would be ${formatBytes(data.length)}, over the ${formatBytes(maxBytes)} write limit; split it into smaller files`,
    );
  }
  let mode: number | undefined;
  let owner: { uid: number; gid: number } | undefined;
  try {
    const st = await stat(real);
    if (st.isDirectory()) throw new FileToolError(SwbErrorCode.FileKind, `${rel} is a directory; choose a file path`);
    if (st.nlink > 1) throw hardLinkError(rel, st.nlink);
    mode = st.mode & 0o7777;
    owner = { uid: st.uid, gid: st.gid };
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw fsError(err, rel);
  }
  const tmp = path.join(path.dirname(real), `.${path.basename(real)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, 'wx', mode ?? 0o666);
    try {
      if (options.sandboxGroup !== undefined) {
        // Through the handle: the temp name cannot be swapped for a symlink in between.
        if (owner) await fh.chown(owner.uid, owner.gid);
        else await fh.chown(-1, options.sandboxGroup);
      }
      if (mode !== undefined) await fh.chmod(mode);
      else if (options.sandboxGroup !== undefined) await fh.chmod(((await fh.stat()).mode & 0o7777) | 0o060);
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, real);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw fsError(err, rel);
  }
  return data.length;
}
