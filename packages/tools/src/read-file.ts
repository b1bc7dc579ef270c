import { SwbErrorCode, type Tool } from '@switchboard/agent';
import { z } from 'zod';
import { FileToolError, throwIfAborted } from './errors.js';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_RESULT_CHARS, type FileToolsOptions } from './options.js';
import { readTextFile } from './text-file.js';
import { confinedReadPath, normalizeUserPath, resolveForRead } from './workspace-path.js';

const readFileInput = z.strictObject({
  path: z.string().min(1).describe('File to read, relative to the workspace (e.g. notes/todo.md).'),
  offset: z.number().int().min(1).optional().describe('First line to return, counting from 1. Default: 1.'),
  limit: z.number().int().min(1).optional().describe('How many lines to return. Default: to the end of the file.'),
});

/** Input of read_file. */
export type ReadFileInput = z.output<typeof readFileInput>;

/** Creates `read_file`: returns the text of a workspace file, optionally a range of lines. */
export function createReadFileTool(opts: Pick<FileToolsOptions, 'maxFileBytes' | 'maxResultChars'> = {}): Tool<ReadFileInput> {
  const maxBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  return {
    name: 'read_file',
    description:
      'Read a text file in the workspace and return its raw text. Use offset and limit to read a range of lines of a long file. ' +
      'Refuses directories (use list_files), binary files and very large files (use search_files).',
    input: readFileInput,
    readOnly: true,
    concurrencySafe: true,
    maxResultChars: opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    ruleContent: (input) => normalizeUserPath(input.path),
    // A loaded skill's folder is readable too (read-only): see resolveForRead.
    validateInput: confinedReadPath((input) => input.path),
    async call(input, ctx) {
      throwIfAborted(ctx.signal, 'read_file');
      const target = await resolveForRead(ctx.workspace, input.path, ctx.skills?.readRoots() ?? []);
      const text = await readTextFile(target.real, target.relative, maxBytes, 'read_file');
      if (text === '') return { content: `[${target.relative} is empty]` };
      return { content: sliceLines(text, input.offset ?? 1, input.limit, target.relative) };
    },
  };
}

/**
 * The raw text of lines `offset .. offset+limit-1` (1-based), line endings included. Throws
 * when `offset` is past the last line.
 */
function sliceLines(text: string, offset: number, limit: number | undefined, rel: string): string {
  if (offset === 1 && limit === undefined) return text;
  let start = 0;
  for (let line = 1; line < offset; line++) {
    const nl = text.indexOf('\n', start);
    if (nl === -1 || nl === text.length - 1) {
      throw new FileToolError(SwbErrorCode.ToolInput, `offset ${offset} is past the end of ${rel}, which has ${line} line${line === 1 ? '' : 's'}`);
    }
    start = nl + 1;
  }
  if (limit === undefined) return text.slice(start);
  let end = start;
  for (let n = 0; n < limit; n++) {
    const nl = text.indexOf('\n', end);
    if (nl === -1) return text.slice(start);
    end = nl + 1;
  }
  return text.slice(start, end);
}
