import path from 'node:path';
import type { Tool } from '@switchboard/agent';
import { z } from 'zod';
import { makeParentDirs, writeFileAtomic } from './atomic-write.js';
import { throwIfAborted } from './errors.js';
import { DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_WRITE_BYTES, type FileToolsOptions } from './options.js';
import { normalizeUserPath, confinedPath, resolveInWorkspace } from './workspace-path.js';

const writeFileInput = z.strictObject({
  path: z.string().min(1).describe('File to create or overwrite, relative to the workspace (e.g. notes/todo.md). Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file (UTF-8 text).'),
});

/** Input of write_file. */
export type WriteFileInput = z.output<typeof writeFileInput>;

/** Creates `write_file`: creates or replaces a workspace file atomically. */
export function createWriteFileTool(opts: Pick<FileToolsOptions, 'maxWriteBytes' | 'maxResultChars' | 'sandboxGroup'> = {}): Tool<WriteFileInput> {
  const maxBytes = opts.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  return {
    name: 'write_file',
    description:
      'Create a file in the workspace, or replace its whole content. Creates missing parent directories. ' +
      'To change part of an existing file, prefer edit_file.',
    input: writeFileInput,
    readOnly: false,
    concurrencySafe: false,
    maxResultChars: opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    ruleContent: (input) => normalizeUserPath(input.path),
    validateInput: confinedPath((input) => input.path, true),
    async call(input, ctx) {
      throwIfAborted(ctx.signal, 'write_file');
      const target = await resolveInWorkspace(ctx.workspace, input.path, { forWrite: true });
      // The resolved parent is inside the workspace, so creating it cannot escape either.
      await makeParentDirs(path.dirname(target.real), target.relative, opts.sandboxGroup);
      const bytes = await writeFileAtomic(target.real, target.relative, input.content, maxBytes, { sandboxGroup: opts.sandboxGroup });
      return { content: `Wrote ${bytes} bytes to ${target.relative}` };
    },
  };
}
