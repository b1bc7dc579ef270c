import { FileToolError } from './errors.js';

/**
 * Compiles a simple file-name glob: `*` (any run of characters), `?` (one character) and
 * `{a,b}` (alternatives), e.g. `*.ts` or `*.{md,txt}`. Everything else matches literally.
 * Throws a {@link FileToolError} for a glob with `/` (it matches names, not paths) or unbalanced braces.
 */
export function compileNameGlob(glob: string): RegExp {
  if (glob.includes('/')) {
    throw new FileToolError('SWB_E_TOOL_INPUT', `glob matches file names only (like *.ts); use path to choose a directory`);
  }
  let source = '';
  let depth = 0;
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else if (ch === '{') {
      source += '(?:';
      depth++;
    } else if (ch === '}' && depth > 0) {
      source += ')';
      depth--;
    } else if (ch === ',' && depth > 0) source += '|';
    else source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  if (depth > 0) throw new FileToolError('SWB_E_TOOL_INPUT', `glob ${glob} has an unclosed "{"`);
  return new RegExp(`^${source}$`, 'su');
}
