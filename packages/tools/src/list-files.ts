import { realpath, stat } from 'node:fs/promises';
import { SwbErrorCode, type Tool } from '@switchboard/agent';
import { z } from 'zod';
import { FileToolError, fsError } from './errors.js';
import { DEFAULT_MAX_LIST_ENTRIES, DEFAULT_MAX_RESULT_CHARS, type FileToolsOptions } from './options.js';
import { walk, withheldNote, type WalkEntry } from './walk.js';
import { isWithin, readOnlyDirectoryTool, resolveInWorkspace } from './workspace-path.js';

const listFilesInput = z.strictObject({
  path: z.string().min(1).default('.').describe('Directory to list, relative to the workspace. Default: the workspace root (".").'),
  recursive: z.boolean().default(false).describe('Also list the contents of subdirectories. Default: false.'),
});

/** Input of list_files. */
export type ListFilesInput = z.output<typeof listFilesInput>;

/** Creates `list_files`: lists a workspace directory, one workspace-relative path per line. */
export function createListFilesTool(opts: Pick<FileToolsOptions, 'maxListEntries' | 'maxResultChars'> = {}): Tool<ListFilesInput> {
  const maxEntries = opts.maxListEntries ?? DEFAULT_MAX_LIST_ENTRIES;
  return {
    name: 'list_files',
    description:
      'List the files and directories in a workspace directory, sorted, one path per line; directories end with "/". ' +
      'Paths are relative to the workspace, ready for the other file tools. Symbolic links are marked and not followed.',
    input: listFilesInput,
    ...readOnlyDirectoryTool<ListFilesInput>(opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS),
    async call(input, ctx) {
      const dir = await resolveInWorkspace(ctx.workspace, input.path ?? '.');
      const st = await stat(dir.real).catch((err: unknown) => {
        throw fsError(err, dir.relative);
      });
      if (!st.isDirectory()) {
        throw new FileToolError(SwbErrorCode.FileKind, `${dir.relative} is a file, not a directory; use read_file to read it`);
      }
      const lines: string[] = [];
      const withheld = { count: 0 };
      const walkOpts = { recursive: input.recursive ?? false, signal: ctx.signal, toolName: 'list_files', filter: ctx.pathFilter, withheld };
      for await (const entry of walk(dir.real, dir.relative, walkOpts)) {
        if (lines.length === maxEntries) {
          lines.push(`[listing cut at ${maxEntries} entries; list a subdirectory to see more]`);
          break;
        }
        lines.push(await describeEntry(entry, dir.root));
      }
      const note = withheldNote(withheld);
      if (lines.length === 0) return { content: note ? `[nothing to show in ${dir.relative}] ${note}` : `[${dir.relative} is empty]` };
      return { content: [...lines, ...(note ? [note] : [])].join('\n') };
    },
  };
}

async function describeEntry(entry: WalkEntry, root: string): Promise<string> {
  switch (entry.type) {
    case 'file':
      return entry.relative;
    case 'dir':
      return entry.unreadable ? `${entry.relative}/  [unreadable]` : `${entry.relative}/`;
    case 'other':
      return `${entry.relative}  [special file]`;
    case 'symlink':
      return describeSymlink(entry, root);
  }
}

// Where a symlink leads is shown only as inside/outside: the target itself may be a host path.
async function describeSymlink(entry: WalkEntry, root: string): Promise<string> {
  let target: string;
  try {
    target = await realpath(entry.absolute);
  } catch {
    return `${entry.relative}  [broken symlink]`;
  }
  if (!isWithin(root, target)) {
    return `${entry.relative}  [symlink to outside the workspace]`;
  }
  const isDir = (await stat(target).catch(() => undefined))?.isDirectory() ?? false;
  return `${entry.relative}${isDir ? '/' : ''}  [symlink]`;
}
