/**
 * Runs one command on the host, without a sandbox (`tools.exec.sandbox: "none"`, chosen explicitly
 * by the operator; every such call is approved by a person first). Same contract as the sandboxed
 * runner: `bash -c` in its own process group with the scrubbed environment, stdout and stderr on
 * one pipe in arrival order, output cut to the budget, progress, and the whole group killed on abort
 * or timeout.
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { sandboxEnv } from './bwrap-args.js';
import { OutputBuffer } from './output-buffer.js';
import { signalPid } from './proc.js';
import {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_OUTPUT_BUDGET,
  DEFAULT_PROGRESS_INTERVAL_MS,
  MIN_PROGRESS_INTERVAL_MS,
  type SandboxCallOptions,
  type SandboxResult,
} from './run.js';

/** What a host run needs (resolved by the caller). */
export interface HostRunOptions {
  /** Absolute workspace path: the working directory and `HOME`. */
  workspace: string;
  /** `PATH` of the command. */
  path: string;
  /** Absolute path of bash. Default `/usr/bin/bash`. */
  bashPath?: string;
  outputBudget?: number;
  progressIntervalMs?: number;
  killGraceMs?: number;
}

/** Runs `command` with `bash -c` on the host and resolves when its process group is done. */
export function runOnHost(options: HostRunOptions, command: string, call: SandboxCallOptions = {}): Promise<SandboxResult> {
  const started = Date.now();
  const output = new OutputBuffer(options.outputBudget ?? DEFAULT_OUTPUT_BUDGET);
  return new Promise<SandboxResult>((resolve, reject) => {
    if (call.signal?.aborted) {
      resolve({ exitCode: null, signal: null, output: '[not started: aborted]', truncated: false, durationMs: 0, timedOut: false, aborted: true });
      return;
    }
    const child = spawn(options.bashPath ?? '/usr/bin/bash', ['-c', 'exec 2>&1; exec /usr/bin/bash -c "$1"', 'exec', command], {
      detached: true,
      env: sandboxEnv({ workspace: options.workspace, path: options.path }),
      cwd: options.workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const decoder = new StringDecoder('utf8');
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    let timeoutTimer: NodeJS.Timeout | undefined;
    const notify = <T>(observer: ((value: T) => void) | undefined, value: T) => {
      try {
        observer?.(value);
      } catch {
        // Observers are best-effort.
      }
    };
    const progressTimer = call.onProgress
      ? setInterval(
          () => notify(call.onProgress, { lines: output.lines, elapsedMs: Date.now() - started }),
          Math.max(MIN_PROGRESS_INTERVAL_MS, options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS),
        )
      : undefined;
    const stop = () => {
      const pid = child.pid;
      if (pid === undefined || killTimer) return;
      signalPid(-pid, 'SIGTERM');
      killTimer = setTimeout(() => signalPid(-pid, 'SIGKILL'), options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    };
    const onAbort = () => {
      aborted = true;
      stop();
    };
    call.signal?.addEventListener('abort', onAbort, { once: true });
    if (call.timeoutMs !== undefined && Number.isFinite(call.timeoutMs)) {
      timeoutTimer = setTimeout(() => {
        timedOut = true;
        stop();
      }, call.timeoutMs);
    }
    const append = (text: string) => {
      if (text.length === 0) return;
      output.push(text);
      notify(call.onOutput, text);
    };
    child.stdout?.on('data', (chunk: Buffer) => append(decoder.write(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => append(chunk.toString('utf8')));
    if (child.pid !== undefined) notify(call.onSpawn, child.pid);
    const cleanup = () => {
      if (progressTimer) clearInterval(progressTimer);
      if (timeoutTimer) clearTimeout(timeoutTimer);
      if (killTimer) clearTimeout(killTimer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (error) => {
      cleanup();
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      cleanup();
      // Background processes the command left in its group do not outlive the call.
      if (child.pid !== undefined) signalPid(-child.pid, 'SIGKILL');
      append(decoder.end());
      if (timedOut) append(`\n[killed: timed out after ${call.timeoutMs} ms]`);
      else if (aborted) append('\n[killed: aborted]');
      resolve({ exitCode, signal, output: output.text(), truncated: output.truncated, durationMs: Date.now() - started, timedOut, aborted });
    });
  });
}
