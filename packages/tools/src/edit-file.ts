import { SwbErrorCode, type Tool } from '@switchboard/agent';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.js';
import { FileToolError, throwIfAborted } from './errors.js';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_WRITE_BYTES, type FileToolsOptions } from './options.js';
import { readTextFile } from './text-file.js';
import { normalizeUserPath, confinedPath, resolveInWorkspace } from './workspace-path.js';

const editFileInput = z.strictObject({
  path: z.string().min(1).describe('File to edit, relative to the workspace (e.g. notes/todo.md).'),
  old_string: z.string().min(1).describe('The exact text to replace, including whitespace and line breaks. Must occur exactly once unless replaceAll is true.'),
  new_string: z.string().describe('The text to put in its place. Must differ from old_string.'),
  replaceAll: z.boolean().default(false).describe('Replace every occurrence of old_string instead of requiring exactly one. Default: false.'),
});

/** Input of edit_file. */
export type EditFileInput = z.output<typeof editFileInput>;

/** Creates `edit_file`: exact string replacement in a workspace text file, written atomically. */
export function createEditFileTool(
  opts: Pick<FileToolsOptions, 'maxFileBytes' | 'maxWriteBytes' | 'maxResultChars' | 'sandboxGroup'> = {},
): Tool<EditFileInput> {
  const maxRead = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxWrite = opts.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  return {
    name: 'edit_file',
    description:
      'Replace exact text in an existing workspace text file. old_string must match the file exactly (read the file first) ' +
      'and be unique unless replaceAll is set; include surrounding lines to make it unique.',
    input: editFileInput,
    readOnly: false,
    concurrencySafe: false,
    maxResultChars: opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    ruleContent: (input) => normalizeUserPath(input.path),
    validateInput: confinedPath((input) => input.path, false, true),
    async call(input, ctx) {
      throwIfAborted(ctx.signal, 'edit_file');
      if (input.old_string === input.new_string) {
        throw new FileToolError(SwbErrorCode.ToolInput, 'old_string and new_string are identical, so there is nothing to change');
      }
      const target = await resolveInWorkspace(ctx.workspace, input.path);
      const text = await readTextFile(target.real, target.relative, maxRead, 'edit_file');
      // split/join rather than String.replace, which would expand `$&`-style patterns in new_string.
      const parts = text.split(input.old_string);
      const count = parts.length - 1;
      if (count === 0) throw new FileToolError(SwbErrorCode.EditNoMatch, `old_string was not found in ${target.relative}`);
      if (count > 1 && !input.replaceAll) {
        throw new FileToolError(
          SwbErrorCode.EditAmbiguous,
          `old_string occurs ${count} times in ${target.relative}; add context to make it unique or set replaceAll`,
        );
      }
      throwIfAborted(ctx.signal, 'edit_file');
      await writeFileAtomic(target.real, target.relative, parts.join(input.new_string), maxWrite, { sandboxGroup: opts.sandboxGroup });
      return { content: `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${target.relative}` };
    },
  };
}
