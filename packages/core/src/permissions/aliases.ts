/**
 * Legacy and foreign tool names → the gateway's canonical tool names. Rules, hook matchers and
 * called tools all go through {@link canonicalToolName}, so a rule written against an old name
 * (`Write(notes/**)`, imported from another assistant's settings) still binds the renamed tool,
 * and a tool registered under an old name never escapes a deny on the new one.
 *
 * | alias                         | canonical      | why                                        |
 * |-------------------------------|----------------|--------------------------------------------|
 * | `Read`, `View`, `view`        | `read_file`    | Claude Code / text-editor tool names       |
 * | `Write`, `create_file`        | `write_file`   | whole-file create/replace                  |
 * | `Edit`, `MultiEdit`, `str_replace`, `str_replace_editor`, `str_replace_based_edit_tool` | `edit_file` | in-place edits |
 * | `LS`, `Glob`, `list_dir`      | `list_files`   | directory listing / finding files by name  |
 * | `Grep`, `grep`                | `search_files` | content search                             |
 * | `Bash`, `bash`, `shell`       | `exec`         | shell commands (command matcher)           |
 * | `WebFetch`, `fetch`           | `web_fetch`    | HTTP fetches (domain matcher)              |
 *
 * Names are case-sensitive; MCP tool names (`mcp__server__tool`) are never aliased.
 */
export const TOOL_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  Read: 'read_file',
  View: 'read_file',
  view: 'read_file',
  Write: 'write_file',
  create_file: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  str_replace: 'edit_file',
  str_replace_editor: 'edit_file',
  str_replace_based_edit_tool: 'edit_file',
  LS: 'list_files',
  Glob: 'list_files',
  list_dir: 'list_files',
  Grep: 'search_files',
  grep: 'search_files',
  Bash: 'exec',
  bash: 'exec',
  shell: 'exec',
  WebFetch: 'web_fetch',
  fetch: 'web_fetch',
});

/**
 * The canonical name of a tool: `extra` (operator-configured aliases) first, then
 * {@link TOOL_ALIASES}; any other name is returned unchanged.
 */
export function canonicalToolName(name: string, extra?: Readonly<Record<string, string>>): string {
  if (extra && Object.hasOwn(extra, name)) return extra[name] ?? name;
  return Object.hasOwn(TOOL_ALIASES, name) ? (TOOL_ALIASES[name] ?? name) : name;
}
