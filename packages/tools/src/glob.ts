import { compileSafeRegex, DEFAULT_REGEX_MAX_LENGTH, escapeRegExp, SafeRegexError, type SafeRegex, SwbErrorCode } from '@switchboard/agent';
import { FileToolError } from './errors.js';

/**
 * Compiles a simple file-name glob: `*` (any run of characters), `?` (one character) and
 * `{a,b}` (alternatives), e.g. `*.ts` or `*.{md,txt}`. Everything else matches literally.
 * Throws a {@link FileToolError} for a glob with `/` (it matches names, not paths), unbalanced braces
 * or more than `maxLength` characters. The glob runs on the linear-time engine (a backtracking
 * `*a*a*a…b` glob would take minutes on one long name).
 */
export function compileNameGlob(glob: string, maxLength = DEFAULT_REGEX_MAX_LENGTH): SafeRegex {
  if (glob.length > maxLength) {
    throw new FileToolError(SwbErrorCode.ToolInput, `glob is ${glob.length} characters long; the limit is ${maxLength} (limits.regexMaxLength)`);
  }
  if (glob.includes('/')) {
    throw new FileToolError(SwbErrorCode.ToolInput, `glob matches file names only (like *.ts); use path to choose a directory`);
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
    else source += escapeRegExp(ch);
  }
  if (depth > 0) throw new FileToolError(SwbErrorCode.ToolInput, `glob ${glob} has an unclosed "{"`);
  try {
    return compileSafeRegex(`^${source}$`, { dotAll: true, maxLength: Infinity });
  } catch (err) {
    throw new FileToolError(SwbErrorCode.ToolInput, `glob ${glob}: ${err instanceof SafeRegexError ? err.message : String(err)}`);
  }
}
