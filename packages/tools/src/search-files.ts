import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  compileSafeRegex,
  DEFAULT_REGEX_DEADLINE_MS,
  DEFAULT_REGEX_MAX_LENGTH,
  RegexLineMatcher,
  RegexWorkerStopped,
  SafeRegexError,
  type SafeRegex,
  SwbErrorCode,
  type Tool,
} from '@switchboard/agent';
import { z } from 'zod';
import { FileToolError, fsError } from './errors.js';
import { compileNameGlob } from './glob.js';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_LINE_CHARS, DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_SEARCH_MATCHES, type FileToolsOptions } from './options.js';
import { formatBytes, loadText } from './text-file.js';
import { walk, withheldNote, type WalkEntry } from './walk.js';
import { readOnlyDirectoryTool, resolveInWorkspace } from './workspace-path.js';

const searchFilesInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Regular expression (RE2 syntax, like JavaScript without backreferences or lookaround) to look for in each line, e.g. "TODO|FIXME" or "^import ".',
    ),
  path: z.string().min(1).default('.').describe('File or directory to search, relative to the workspace. Default: the whole workspace (".").'),
  glob: z.string().min(1).optional().describe('Only search files whose name matches this glob, e.g. "*.ts" or "*.{md,txt}".'),
  caseInsensitive: z.boolean().default(false).describe('Match regardless of letter case. Default: false.'),
});

/** Input of search_files. */
export type SearchFilesInput = z.output<typeof searchFilesInput>;

type SearchOptions = Pick<
  FileToolsOptions,
  'maxFileBytes' | 'maxSearchMatches' | 'maxLineChars' | 'maxResultChars' | 'regexMaxLength' | 'regexDeadlineMs' | 'onRegexWorkerTerminated'
>;

/** Creates `search_files`: a line-by-line regex search over the workspace's text files. */
export function createSearchFilesTool(opts: SearchOptions = {}): Tool<SearchFilesInput> {
  const maxBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxMatches = opts.maxSearchMatches ?? DEFAULT_MAX_SEARCH_MATCHES;
  const maxLine = opts.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  return {
    name: 'search_files',
    description:
      'Search the text files under a workspace path for lines matching a regular expression. ' +
      'Returns "path:line: text" per match. Skips binary and very large files; symbolic links are not followed. ' +
      'Patterns run on a linear-time engine: backreferences and lookahead/lookbehind are not supported.',
    input: searchFilesInput,
    ...readOnlyDirectoryTool<SearchFilesInput>(opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS),
    async call(input, ctx) {
      const regex = compilePattern(input.pattern, input.caseInsensitive ?? false, opts.regexMaxLength ?? DEFAULT_REGEX_MAX_LENGTH);
      const nameGlob = input.glob === undefined ? undefined : compileNameGlob(input.glob, opts.regexMaxLength ?? DEFAULT_REGEX_MAX_LENGTH);
      const root = await resolveInWorkspace(ctx.workspace, input.path ?? '.');
      const rootStat = await stat(root.real).catch((err: unknown) => {
        throw fsError(err, root.relative);
      });
      const withheld = { count: 0 };
      const files: AsyncIterable<WalkEntry> | WalkEntry[] = rootStat.isDirectory()
        ? walk(root.real, root.relative, { recursive: true, signal: ctx.signal, toolName: 'search_files', filter: ctx.pathFilter, withheld })
        : [{ relative: root.relative, absolute: root.real, type: 'file' }];

      const out: string[] = [];
      const skipped = { binary: 0, large: 0, unreadable: 0 };
      let cut = false;
      const deadlineMs = opts.regexDeadlineMs ?? DEFAULT_REGEX_DEADLINE_MS;
      // The worker starts with the first file to match; it is terminated here after the walk, at once when
      // ctx.signal aborts (the walk's only throw once files are being read), or by a failed matchLines.
      const matcher = new RegexLineMatcher(regex, {
        deadlineMs,
        signal: ctx.signal,
        ...(opts.onRegexWorkerTerminated ? { onTerminated: (why) => opts.onRegexWorkerTerminated?.({ why, toolUseId: ctx.toolUseId }) } : {}),
      });
      search: for await (const entry of files) {
        if (entry.type === 'dir' && entry.unreadable) skipped.unreadable++;
        if (entry.type !== 'file' || (nameGlob && !nameGlob.test(path.posix.basename(entry.relative)))) continue;
        const loaded = await loadText(entry.absolute, maxBytes).catch(() => undefined);
        if (loaded?.kind !== 'text') {
          if (loaded?.kind === 'binary') skipped.binary++;
          else if (loaded?.kind === 'too-large') skipped.large++;
          else skipped.unreadable++;
          continue;
        }
        const hits = await matcher.matchLines(loaded.text, maxMatches - out.length + 1).catch((err: unknown) => {
          throw stoppedError(err, entry.relative, deadlineMs);
        });
        if (hits.length === 0) continue;
        const lines = loaded.text.split('\n');
        for (const i of hits) {
          const line = (lines[i] ?? '').replace(/\r$/, '');
          if (out.length === maxMatches) {
            cut = true;
            break search;
          }
          out.push(`${entry.relative}:${i + 1}: ${line.length > maxLine ? `${line.slice(0, maxLine)}…` : line}`);
        }
      }
      await matcher.close();

      const notes: string[] = [];
      if (cut) notes.push(`[stopped after ${maxMatches} matches; narrow the pattern, path or glob to see the rest]`);
      const skips = describeSkips(skipped, maxBytes);
      if (skips) notes.push(skips);
      const held = withheldNote(withheld);
      if (held) notes.push(held);
      const body = out.length > 0 ? out : [`No matches for /${input.pattern}/ in ${root.relative}`];
      return { content: [...body, ...notes].join('\n') };
    },
  };
}

function compilePattern(pattern: string, caseInsensitive: boolean, maxLength: number): SafeRegex {
  try {
    return compileSafeRegex(pattern, { caseInsensitive, maxLength, maxLengthKey: 'limits.regexMaxLength' });
  } catch (err) {
    const why = err instanceof SafeRegexError ? err.message : String(err);
    throw new FileToolError(SwbErrorCode.ToolInput, `pattern: ${why}`);
  }
}

// A terminated worker becomes an answer the model can act on; anything else passes through.
function stoppedError(err: unknown, file: string, deadlineMs: number): unknown {
  if (!(err instanceof RegexWorkerStopped)) return err;
  if (err.why === 'deadline') {
    return new FileToolError(
      SwbErrorCode.ToolInput,
      `search stopped: the pattern took longer than limits.regexDeadline (${deadlineMs} ms) on ${file}; use a simpler pattern, or narrow path or glob`,
    );
  }
  if (err.why === 'aborted') return new FileToolError(SwbErrorCode.Aborted, 'search_files was stopped before it finished');
  return new FileToolError(SwbErrorCode.ToolInput, `search stopped on ${file}: ${err.message}`);
}

function describeSkips(s: { binary: number; large: number; unreadable: number }, maxBytes: number): string | undefined {
  const parts: string[] = [];
  if (s.binary > 0) parts.push(`${s.binary} binary file${s.binary === 1 ? '' : 's'}`);
  if (s.large > 0) parts.push(`${s.large} file${s.large === 1 ? '' : 's'} over ${formatBytes(maxBytes)}`);
  if (s.unreadable > 0) parts.push(`${s.unreadable} unreadable file${s.unreadable === 1 ? '' : 's'} or director${s.unreadable === 1 ? 'y' : 'ies'}`);
  return parts.length > 0 ? `[skipped ${parts.join(', ')}]` : undefined;
}
