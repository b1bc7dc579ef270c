import { SwbErrorCode } from '@switchboard/agent';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { FileToolError, fsError } from './errors.js';

/** How many leading bytes are checked for NUL when deciding whether a file is binary. */
export const BINARY_SNIFF_BYTES = 8192;

// O_NONBLOCK keeps a FIFO from hanging the open; O_NOFOLLOW refuses a final component that was
// swapped for a symlink after the path was checked. Both are absent on Windows.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** True when the first {@link BINARY_SNIFF_BYTES} bytes contain a NUL byte. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** What {@link loadText} found at a path. */
export type LoadedText =
  | { kind: 'text'; text: string }
  | { kind: 'binary' }
  | { kind: 'too-large'; size: number }
  | { kind: 'directory' }
  | { kind: 'special' };

/** Reads a regular text file of at most `maxBytes`, classifying anything else instead of reading it. */
export async function loadText(real: string, maxBytes: number): Promise<LoadedText> {
  const fh = await open(real, OPEN_FLAGS);
  try {
    const st = await fh.stat();
    if (st.isDirectory()) return { kind: 'directory' };
    if (!st.isFile()) return { kind: 'special' };
    if (st.size > maxBytes) return { kind: 'too-large', size: st.size };
    const bytes = await fh.readFile();
    // The file may have grown since the stat.
    if (bytes.length > maxBytes) return { kind: 'too-large', size: bytes.length };
    if (looksBinary(bytes)) return { kind: 'binary' };
    return { kind: 'text', text: bytes.toString('utf8') };
  } finally {
    await fh.close();
  }
}

/**
 * Reads a text file for read_file or edit_file, throwing a clear {@link FileToolError} for a
 * directory, special file, binary file or a file over `maxBytes`. `toolName` names the limit.
 */
export async function readTextFile(real: string, rel: string, maxBytes: number, toolName: string): Promise<string> {
  let loaded: LoadedText;
  try {
    loaded = await loadText(real, maxBytes);
  } catch (err) {
    throw fsError(err, rel);
  }
  switch (loaded.kind) {
    case 'text':
      return loaded.text;
    case 'directory':
      throw new FileToolError(SwbErrorCode.FileKind, `${rel} is a directory, not a file; use list_files to see what it contains`);
    case 'special':
      throw new FileToolError(SwbErrorCode.FileKind, `${rel} is not a regular file`);
    case 'binary':
      throw new FileToolError(SwbErrorCode.FileBinary, `${rel} looks like a binary file (it contains NUL bytes); ${toolName} works on text files only`);
    case 'too-large':
      throw new FileToolError(
        SwbErrorCode.FileTooLarge,
        `${rel} is ${formatBytes(loaded.size)}, over the ${formatBytes(maxBytes)} limit of ${toolName}; use search_files to find the lines you need`,
      );
  }
}

/** A byte count for people and models: `512 bytes`, `12.5 KiB`, `1 MiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const [value, unit] = n < 1024 * 1024 ? [n / 1024, 'KiB'] : [n / (1024 * 1024), 'MiB'];
  return `${Number(value.toFixed(1))} ${unit}`;
}
