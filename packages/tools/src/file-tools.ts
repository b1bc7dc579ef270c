import type { AnyTool } from '@switchboard/agent';
import { createEditFileTool } from './edit-file.js';
import { createListFilesTool } from './list-files.js';
import type { FileToolsOptions } from './options.js';
import { createReadFileTool } from './read-file.js';
import { createSearchFilesTool } from './search-files.js';
import { createWriteFileTool } from './write-file.js';

/**
 * Creates the built-in workspace file tools: read_file, list_files, search_files, write_file and
 * edit_file. Every tool stays inside `ctx.workspace`.
 */
export function createFileTools(opts: FileToolsOptions = {}): AnyTool[] {
  return [createReadFileTool(opts), createListFilesTool(opts), createSearchFilesTool(opts), createWriteFileTool(opts), createEditFileTool(opts)];
}
