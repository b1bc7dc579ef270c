import { SwbErrorCode } from '@switchboard/agent';
import { randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { FileToolError, errnoCode, fsError, hardLinkError } from './errors.js';
import { formatBytes } from './text-file.js';

/**
 * Writes `content` to `real` atomically: a temp file in the same directory, fsynced, then renamed
 * over the target, so readers see the old or the new file, never half of one. An existing file's
 * permission bits are kept. Content over `maxBytes`, and an existing file with more than one
 * hard link, are refused. `rel` names the file in error
 * messages. Returns the bytes written.
 */
export async function writeFileAtomic(real: string, rel: string, content: string, maxBytes: number): Promise<number> {
  const data = Buffer.from(content, 'utf8');
  if (data.length > maxBytes) {
    throw new FileToolError(
      SwbErrorCode.FileTooLarge,
      `the new content of ${rel} would be ${formatBytes(data.length)}, over the ${formatBytes(maxBytes)} write limit; split it into smaller files`,
    );
  }
  let mode: number | undefined;
  try {
    const st = await stat(real);
    if (st.isDirectory()) throw new FileToolError(SwbErrorCode.FileKind, `${rel} is a directory; choose a file path`);
    if (st.nlink > 1) throw hardLinkError(rel, st.nlink);
    mode = st.mode & 0o7777;
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw fsError(err, rel);
  }
  const tmp = path.join(path.dirname(real), `.${path.basename(real)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, 'wx', mode ?? 0o666);
    try {
      if (mode !== undefined) await fh.chmod(mode);
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
