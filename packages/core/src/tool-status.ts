/**
 * Tool status lines for chat drafts: what a person sees while a tool runs (`🔧 web_fetch
 * example.com…`, then `✅` or `❌`). One summary function every channel uses, and a small board
 * that folds a turn's `tool_start` / `tool_progress` / `tool_end` events into the lines to show.
 *
 * Summaries are short and scrubbed: the host only for `web_fetch`, the first words of an `exec`
 * command (no leading `VAR=value` assignments, nothing after a shell operator), the path for file
 * tools, `<type>: <description>` for `task` (a subagent), and nothing but the tool's name for every other tool. Long random-looking words,
 * `key=value` pairs whose key names a secret, and URL credentials are masked by pattern; the
 * caller's scrubber (the gateway's known secret values) runs last.
 */
import type { TurnEvent } from './channel.js';
import { toolMatchKind } from './permissions/matchers.js';

/** The subagent tool's name (docs/subagents.md): its status line is `🤖 <type>: <description>`. */
export const TASK_TOOL = 'task';

/** Longest summary of a tool's input, in characters. */
export const MAX_TOOL_SUMMARY_CHARS = 60;
/** Longest progress note shown after a running tool's summary, in characters. */
export const MAX_TOOL_PROGRESS_CHARS = 80;
/** Words of an exec command shown. */
const COMMAND_WORDS = 3;
/** Status lines a board shows at most (the newest; older ones are counted). */
export const MAX_TOOL_STATUS_LINES = 5;

const MASK = '…';
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]+/gu;
const SECRET_KEY = /(pass(word|wd)?|secret|token|api[-_]?key|auth|credential|bearer|session|cookie|private)/iu;
/** A run of 16+ key-alphabet characters with both letters and digits (between path or URL separators): likely a key. */
const RANDOM_RUN = /[A-Za-z0-9+_]{16,}/gu;
const SHELL_STOP = /[;&|<>`\n\r()]|\$\(/u;

/** A text scrubber (the gateway's: replaces known secret values). */
export type TextScrub = (text: string) => string;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}${MASK}`;
}

function looksRandom(word: string): boolean {
  return (word.match(RANDOM_RUN) ?? []).some((run) => /[0-9]/u.test(run) && /[A-Za-z]/u.test(run));
}

/** Masks one whitespace-free word: `--token=x` → `--token=…`, a key-like word → `…`, `u:p@host` → `host`. */
function maskWord(word: string): string {
  const withoutCreds = word.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/iu, '$1');
  const eq = withoutCreds.indexOf('=');
  if (eq > 0 && SECRET_KEY.test(withoutCreds.slice(0, eq))) return `${withoutCreds.slice(0, eq + 1)}${MASK}`;
  if (SECRET_KEY.test(withoutCreds) && /[:=]/u.test(withoutCreds)) return MASK;
  return looksRandom(withoutCreds) ? MASK : withoutCreds;
}

function maskText(text: string): string {
  return text
    .replace(CONTROL, ' ')
    .split(/\s+/u)
    .filter((w) => w !== '')
    .map(maskWord)
    .join(' ');
}

function field(input: unknown, key: string): string | undefined {
  if (typeof input !== 'object' || input === null || !Object.hasOwn(input, key)) return undefined;
  const value: unknown = (input as Record<string, unknown>)[key];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url.trim()).hostname;
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

/** The first words of a command line: leading assignments skipped, cut at the first shell operator. */
function commandWords(command: string): string {
  const head = (command.split(SHELL_STOP)[0] ?? '').replace(CONTROL, ' ');
  const words = head.split(/\s+/u).filter((w) => w !== '');
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/u.test(words[0] ?? '')) words.shift();
  return words.slice(0, COMMAND_WORDS).map(maskWord).join(' ');
}

/**
 * A short, scrubbed summary of a tool call's input for a status line: the domain for `web_fetch`
 * (any tool whose rules match by domain), the command's first words for `exec` (command tools), the
 * path for file tools (path tools); `''` for every other tool, whose input is never shown. Total:
 * any input (missing fields, non-objects) gives a string; `scrub` is applied last.
 */
export function summarizeToolInput(name: string, input: unknown, scrub?: TextScrub): string {
  let summary = '';
  if (name === TASK_TOOL) {
    // A subagent: `<type>: <description>` (the model's own short label of its task).
    const description = field(input, 'description');
    summary = `${maskText(field(input, 'type') ?? 'general')}: ${description ? maskText(description) : ''}`;
    return clip(applyScrub(summary, scrub), MAX_TOOL_SUMMARY_CHARS);
  }
  switch (toolMatchKind(name)) {
    case 'domain': {
      const url = field(input, 'url');
      summary = url ? (hostOf(url) ?? '') : '';
      break;
    }
    case 'command': {
      const command = field(input, 'command');
      summary = command ? commandWords(command) : '';
      break;
    }
    case 'path': {
      const path = field(input, 'path');
      summary = path ? maskText(path) : '';
      break;
    }
    default:
      summary = '';
  }
  return clip(applyScrub(summary, scrub), MAX_TOOL_SUMMARY_CHARS);
}

function applyScrub(text: string, scrub: TextScrub | undefined): string {
  if (!scrub || text === '') return text;
  try {
    return scrub(text);
  } catch {
    return '';
  }
}

/** A progress note as shown: control characters removed, words masked, scrubbed, clipped. */
export function summarizeProgress(message: string, scrub?: TextScrub): string {
  return clip(applyScrub(maskText(typeof message === 'string' ? message : ''), scrub), MAX_TOOL_PROGRESS_CHARS);
}

/** Where one tool call stands. */
export type ToolStatusState = 'running' | 'ok' | 'error';

/** One tool call on a {@link ToolStatusBoard}. */
export interface ToolStatusEntry {
  toolUseId: string;
  name: string;
  summary: string;
  state: ToolStatusState;
  /** The latest progress note (running calls only). */
  progress?: string;
}

/** One status line: `🔧 name summary…` (with ` · progress`), `✅ name summary`, `❌ name summary`. */
export function toolStatusLine(entry: ToolStatusEntry): string {
  if (entry.name === TASK_TOOL) {
    // A subagent's line: `🤖 <type>: <description>…` while it works. Its progress notes carry that
    // label themselves (`🤖 general: x · read_file`), so a note replaces it rather than repeating it.
    const label = `🤖 ${entry.summary || 'general:'}`;
    if (entry.state === 'ok') return `✅ ${label}`;
    if (entry.state === 'error') return `❌ ${label}`;
    return entry.progress?.startsWith('🤖') ? `${entry.progress}…` : `${label}…${entry.progress ? ` · ${entry.progress}` : ''}`;
  }
  const label = entry.summary ? `${entry.name} ${entry.summary}` : entry.name;
  if (entry.state === 'ok') return `✅ ${label}`;
  if (entry.state === 'error') return `❌ ${label}`;
  return `🔧 ${label}…${entry.progress ? ` · ${entry.progress}` : ''}`;
}

/**
 * Folds a turn's tool events into status lines. `apply` returns true when the lines changed, so a
 * renderer marks its draft dirty and lets its own edit throttle coalesce the changes: a flood of
 * progress events becomes at most one edit per edit interval. Keyed by tool-use id in a `Map`.
 */
export class ToolStatusBoard {
  private readonly entries = new Map<string, ToolStatusEntry>();

  constructor(private readonly scrub?: TextScrub) {}

  /** Takes one turn event; true when the status lines changed. Other event types are ignored. */
  apply(ev: TurnEvent): boolean {
    switch (ev.type) {
      case 'tool_start': {
        if (this.entries.has(ev.toolUseId)) return false;
        this.entries.set(ev.toolUseId, {
          toolUseId: ev.toolUseId,
          name: ev.name,
          summary: summarizeToolInput(ev.name, ev.input, this.scrub),
          state: 'running',
        });
        return true;
      }
      case 'tool_progress': {
        const entry = this.entries.get(ev.toolUseId);
        if (entry?.state !== 'running') return false;
        const progress = summarizeProgress(ev.message, this.scrub);
        if (progress === (entry.progress ?? '')) return false;
        entry.progress = progress;
        return true;
      }
      case 'tool_end': {
        const state: ToolStatusState = ev.result.is_error ? 'error' : 'ok';
        const entry = this.entries.get(ev.toolUseId);
        if (!entry) {
          this.entries.set(ev.toolUseId, { toolUseId: ev.toolUseId, name: ev.name, summary: '', state });
          return true;
        }
        if (entry.state === state) return false;
        entry.state = state;
        delete entry.progress;
        return true;
      }
      default:
        return false;
    }
  }

  /** The calls seen so far, oldest first. */
  list(): ToolStatusEntry[] {
    return [...this.entries.values()];
  }

  /** The lines to show (the newest {@link MAX_TOOL_STATUS_LINES}, after a count of older ones); `[]` before any tool. */
  lines(): string[] {
    const all = this.list();
    const shown = all.slice(-MAX_TOOL_STATUS_LINES).map(toolStatusLine);
    const older = all.length - shown.length;
    return older > 0 ? [`(${older} earlier tool call${older === 1 ? '' : 's'})`, ...shown] : shown;
  }

  /** The status block: the lines joined by newlines, `''` before any tool. */
  text(): string {
    return this.lines().join('\n');
  }
}
