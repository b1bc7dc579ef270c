import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SwbError, SwbErrorCode } from './errors.js';
import type { SafeRegex } from './safe-regex.js';

/** Default of `limits.regexDeadline`: how long one file's matching may take in the worker. */
export const DEFAULT_REGEX_DEADLINE_MS = 1000;

/** Why a {@link RegexLineMatcher} stopped its worker before the work was done. */
export type RegexWorkerStop = 'deadline' | 'aborted' | 'crashed';

/** Thrown by {@link RegexLineMatcher.matchLines} when the worker was terminated. */
export class RegexWorkerStopped extends SwbError {
  override readonly name = 'RegexWorkerStopped';
  constructor(
    readonly why: RegexWorkerStop,
    message: string,
  ) {
    super(SwbErrorCode.RegexStopped, message);
  }
}

/** Options of {@link RegexLineMatcher}. */
export interface RegexLineMatcherOptions {
  /** Longest one {@link RegexLineMatcher.matchLines} call may run before the worker is terminated. */
  deadlineMs?: number;
  /** Aborting it terminates the worker, during a call or between calls (a turn stopped, or the tool timed out). */
  signal?: AbortSignal;
  /** Told whenever the worker is terminated before finishing its work. Must not throw. */
  onTerminated?: (why: RegexWorkerStop) => void;
}

// The worker: compiles the pattern once, then answers each text with the indexes of matching lines.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2js);
const re = RE2JS.compile(workerData.source, workerData.flags);
parentPort.postMessage({ ready: true });
parentPort.on('message', ({ id, text, limit }) => {
  const lines = text.split('\\n');
  const hits = [];
  for (let i = 0; i < lines.length && hits.length < limit; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (re.test(line)) hits.push(i);
  }
  parentPort.postMessage({ id, hits });
});
`;

let re2jsPath: string | undefined;

/**
 * Runs a {@link SafeRegex} over text in a worker thread, so a pattern that is linear but slow on a
 * huge input (RE2's cost is input length × pattern size) never holds the event loop. Each
 * {@link matchLines} call gets `deadlineMs`; past it, or when `signal` aborts, the worker is
 * terminated and the call throws {@link RegexWorkerStopped}. One matcher per search; {@link close}
 * it when done (terminating is idempotent).
 */
export class RegexLineMatcher {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private seq = 0;
  private readonly deadlineMs: number;
  private stopped: RegexWorkerStopped | undefined;

  constructor(
    private readonly regex: SafeRegex,
    private readonly opts: RegexLineMatcherOptions = {},
  ) {
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_REGEX_DEADLINE_MS;
  }

  /** Indexes (0-based) of the lines of `text` (split on `\n`, a trailing `\r` dropped) that match, at most `limit`. */
  async matchLines(text: string, limit: number): Promise<number[]> {
    if (this.stopped) throw this.stopped;
    const signal = this.opts.signal;
    if (signal?.aborted) throw this.stop('aborted');
    const worker = this.start();
    // Start-up (loading the engine) does not count against the deadline; the signal still bounds it.
    await this.ready;
    if (this.stopped) throw this.stopped;
    const id = ++this.seq;
    return new Promise<number[]>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        unlisten();
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const fail = (why: RegexWorkerStop) => {
        done();
        reject(this.stop(why));
      };
      const onMessage = (m: { id: number; hits: number[] }) => {
        if (m.id !== id) return;
        done();
        resolve(m.hits);
      };
      const onError = () => fail('crashed');
      const onExit = () => fail('crashed');
      const timer = setTimeout(() => fail('deadline'), this.deadlineMs);
      const unlisten = onAbort(signal, () => fail('aborted'));
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage({ id, text, limit });
    });
  }

  /** Terminates the worker (if one was started). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    re2jsPath ??= createRequire(import.meta.url).resolve('re2js');
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { re2js: re2jsPath, source: this.regex.engine.source, flags: this.regex.engine.flags },
      // The worker holds one file's text and its lines at a time (files are capped by maxFileBytes).
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    w.unref();
    this.worker = w;
    // Always listened to: an 'error' with no listener (out of memory, say) would crash the gateway.
    w.on('error', () => {
      if (this.worker === w) this.stop('crashed');
    });
    this.ready = new Promise<void>((resolve) => {
      const onReady = (m: { ready?: boolean }) => {
        if (!m.ready) return;
        w.off('message', onReady);
        resolve();
      };
      w.on('message', onReady);
      // A worker that dies before it is ready ends the wait too; matchLines then sees this.stopped.
      w.once('exit', () => {
        if (this.worker === w && !this.stopped) this.stop('crashed');
        resolve();
      });
      onAbort(this.opts.signal, () => resolve());
    });
    // Aborting terminates the worker even between matchLines calls.
    onAbort(this.opts.signal, () => void this.stop('aborted'));
    return w;
  }

  private stop(why: RegexWorkerStop): RegexWorkerStopped {
    if (this.stopped) return this.stopped;
    const message =
      why === 'deadline'
        ? `the pattern took longer than ${this.deadlineMs} ms on one file`
        : why === 'aborted'
          ? 'the search was stopped'
          : 'the pattern worker failed';
    this.stopped = new RegexWorkerStopped(why, message);
    if (this.worker) {
      void this.close();
      try {
        this.opts.onTerminated?.(why);
      } catch {
        // Contract: onTerminated must not throw; a throw here must not mask the stop.
      }
    }
    return this.stopped;
  }
}

// Listens for `signal`'s abort; tolerates signal-like objects without events (only `aborted`).
function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal || typeof signal.addEventListener !== 'function') return () => {};
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
