/**
 * What both runners (sandboxed and on the host) share once their process is spawned: the output
 * stream decoded in arrival order and cut to a budget, progress at an interval, the abort signal and
 * the timeout turned into one stop, and the result once the process closed and was cleaned up.
 */
import type { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { OutputBuffer } from './output-buffer.js';
import type { SandboxCallOptions, SandboxResult } from './run.js';

/** Default output budget (characters) of one run. */
export const DEFAULT_OUTPUT_BUDGET = 30_000;
/** Default progress interval. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 1_000;
/** Shortest progress interval accepted. */
export const MIN_PROGRESS_INTERVAL_MS = 200;

/** Calls an observer; an observer that throws never breaks the run (its error is dropped). */
export function notify<T>(observer: ((value: T) => void) | undefined, value: T): void {
  try {
    observer?.(value);
  } catch {
    // Observers are best-effort; the run and its cleanup must go on.
  }
}

/** The result of a call whose signal had fired before anything was spawned. */
export function abortedBeforeStart(): SandboxResult {
  return { exitCode: null, signal: null, output: '[not started: aborted]', truncated: false, durationMs: 0, timedOut: false, aborted: true };
}

/** How one runner stops its process and cleans up after it. */
export interface RunControl {
  /** Starts stopping the process (called at most once, on abort or timeout). */
  stop(): void;
  /** After the process closed: kills what it left behind and waits for it; a string is appended to the output as a note. */
  settle(): Promise<string | undefined>;
}

/** Collects a spawned process (stdout and stderr pipes) into a {@link SandboxResult}. */
export function collectRun(
  child: ChildProcess,
  budget: { outputBudget?: number | undefined; progressIntervalMs?: number | undefined },
  call: SandboxCallOptions,
  control: RunControl,
): Promise<SandboxResult> {
  const started = Date.now();
  const output = new OutputBuffer(budget.outputBudget ?? DEFAULT_OUTPUT_BUDGET);
  const decoder = new StringDecoder('utf8');
  let timedOut = false;
  let aborted = false;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    control.stop();
  };
  const progressTimer = call.onProgress
    ? setInterval(
        () => notify(call.onProgress, { lines: output.lines, elapsedMs: Date.now() - started }),
        Math.max(MIN_PROGRESS_INTERVAL_MS, budget.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS),
      )
    : undefined;
  const onAbort = () => {
    aborted = true;
    stop();
  };
  call.signal?.addEventListener('abort', onAbort, { once: true });
  const timeoutTimer =
    call.timeoutMs !== undefined && Number.isFinite(call.timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, call.timeoutMs)
      : undefined;
  const append = (text: string) => {
    if (text.length === 0) return;
    output.push(text);
    notify(call.onOutput, text);
  };
  child.stdout?.on('data', (chunk: Buffer) => append(decoder.write(chunk)));
  // The sandbox's own errors (before the merge) arrive on stderr; the command's stderr comes through stdout.
  child.stderr?.on('data', (chunk: Buffer) => append(chunk.toString('utf8')));
  if (child.pid !== undefined) notify(call.onSpawn, child.pid);
  const cleanup = () => {
    if (progressTimer) clearInterval(progressTimer);
    if (timeoutTimer) clearTimeout(timeoutTimer);
    call.signal?.removeEventListener('abort', onAbort);
  };
  return new Promise<SandboxResult>((resolve, reject) => {
    child.on('error', (error) => {
      cleanup();
      void control.settle().finally(() => reject(error));
    });
    child.on('close', (exitCode, signal) => {
      cleanup();
      void control.settle().then((note) => {
        append(decoder.end());
        const durationMs = Date.now() - started;
        if (timedOut) append(`\n[killed: timed out after ${call.timeoutMs} ms]`);
        else if (aborted) append('\n[killed: aborted]');
        if (note) append(`\n[${note}]`);
        resolve({ exitCode, signal, output: output.text(), truncated: output.truncated, durationMs, timedOut, aborted });
      });
    });
  });
}
