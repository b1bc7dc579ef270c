import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { appendRunLog } from './run-log.js';

/** What `waitForLine` matches: a substring, a regular expression or a predicate. */
export type LineMatcher = string | RegExp | ((line: string) => boolean);

/** Turns a `LineMatcher` into a predicate. */
export function toLinePredicate(match: LineMatcher): (line: string) => boolean {
  if (typeof match === 'string') return (l) => l.includes(match);
  if (match instanceof RegExp) return (l) => new RegExp(match.source, match.flags.replace('g', '')).test(l);
  return match;
}

/**
 * Collects a child's stdout and stderr line by line: each line is kept in memory and copied
 * into the run log as `[<source>] <line>`.
 */
export class ChildOutput {
  /** Every line so far, stdout and stderr interleaved in arrival order. */
  readonly lines: string[] = [];
  private readonly listeners = new Set<(line: string) => void>();
  /** Resolves once both streams have ended. */
  readonly ended: Promise<void>;

  constructor(child: ChildProcess, source: string) {
    const ends: Array<Promise<void>> = [];
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      const rl = createInterface({ input: stream, crlfDelay: Infinity });
      rl.on('line', (line) => {
        this.lines.push(line);
        appendRunLog(source, line);
        for (const l of [...this.listeners]) l(line);
      });
      ends.push(new Promise<void>((resolve) => rl.once('close', () => resolve())));
    }
    this.ended = Promise.all(ends).then(() => undefined);
  }

  /** Calls `fn` for every later line; returns an unsubscribe function. */
  onLine(fn: (line: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Resolves with the first line (already collected from line index `from` on, or later) matching
   * `match`. Rejects after `timeoutMs`, or when `gone` settles first, with the tail of the output in the message.
   */
  waitForLine(match: LineMatcher, timeoutMs: number, gone?: Promise<unknown>, what = 'process', from = 0): Promise<string> {
    const pred = toLinePredicate(match);
    const found = this.lines.slice(from).find(pred);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<string>((resolve, reject) => {
      let off = () => {};
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no log line matching ${String(match)} within ${timeoutMs} ms\n${this.tail()}`));
      }, timeoutMs);
      off = this.onLine((line) => {
        if (!pred(line)) return;
        off();
        clearTimeout(timer);
        resolve(line);
      });
      void gone?.then(() => {
        off();
        clearTimeout(timer);
        const late = this.lines.slice(from).find(pred);
        if (late !== undefined) resolve(late);
        else reject(new Error(`${what} exited before a log line matched ${String(match)}\n${this.tail()}`));
      });
    });
  }

  /** The last `n` lines, for error messages. */
  tail(n = 60): string {
    const shown = this.lines.slice(-n);
    return `--- last ${shown.length} of ${this.lines.length} output lines ---\n${shown.join('\n')}`;
  }
}
