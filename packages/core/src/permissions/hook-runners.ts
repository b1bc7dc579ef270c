import { spawn } from 'node:child_process';
import { SwbError, SwbErrorCode } from '@switchboard/agent';

/** A hook that runs a program: JSON on stdin, JSON (or nothing) on stdout, exit code 0. */
export interface CommandHook {
  type: 'command';
  /** Program and arguments; run directly, never through a shell. */
  command: readonly string[];
  /** Extra environment variables for this hook. */
  env?: Readonly<Record<string, string>>;
  /** Working directory. */
  cwd?: string;
  timeoutMs?: number;
}

/** A hook that POSTs the payload as JSON and reads JSON (or nothing) back; non-2xx fails. */
export interface HttpHook {
  type: 'http';
  url: string;
  /** Extra request headers (e.g. an Authorization header); never logged. */
  headers?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

/** Why a hook produced no usable answer. */
export class HookRunError extends SwbError {
  readonly kind: 'timeout' | 'exit' | 'spawn' | 'http' | 'bad_output' | 'aborted';
  constructor(kind: HookRunError['kind'], message: string, options?: { cause?: unknown }) {
    super(SwbErrorCode.HookRun, message, options);
    this.name = 'HookRunError';
    this.kind = kind;
  }
}

/** Largest stdout / response body accepted from a hook. */
export const MAX_HOOK_OUTPUT_BYTES = 1024 * 1024;

/** Settings shared by the runners. */
export interface HookRunnerOptions {
  timeoutMs: number;
  /** Base environment for command hooks (the hook's own `env` is laid over it). Nothing else is inherited. */
  env?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

/**
 * Runs a command hook and returns its stdout. The process gets `body` on stdin and is killed
 * (with its process group) when the timeout passes or `signal` aborts.
 *
 * @throws {HookRunError} on spawn failure, timeout, a non-zero exit or oversized output.
 */
export function runCommandHook(hook: CommandHook, body: string, opts: HookRunnerOptions): Promise<string> {
  const [program, ...args] = hook.command;
  if (program === undefined || program === '') {
    return Promise.reject(new HookRunError('spawn', 'the hook command is empty'));
  }
  return new Promise<string>((resolve, reject) => {
    const group = process.platform !== 'win32';
    const child = spawn(program, args, {
      shell: false,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...opts.env, ...hook.env },
      ...(hook.cwd !== undefined ? { cwd: hook.cwd } : {}),
      detached: group, // own process group, so a timeout also ends what the hook started
      windowsHide: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: HookRunError | undefined;
    let settled = false;
    const kill = (why: HookRunError) => {
      failure ??= why;
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
      // Settle now: a grandchild in another process group could keep the pipes open forever.
      finish(() => reject(failure));
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => kill(new HookRunError('timeout', `timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const onAbort = () => kill(new HookRunError('aborted', 'aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_HOOK_OUTPUT_BYTES) kill(new HookRunError('bad_output', `wrote more than ${MAX_HOOK_OUTPUT_BYTES} bytes`));
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 2000) err += chunk.toString('utf8');
    });
    child.stdin.on('error', () => {}); // a hook that exits without reading stdin is not an error by itself
    child.on('error', (e) => finish(() => reject(new HookRunError('spawn', `could not start: ${e.message}`, { cause: e }))));
    child.on('close', (code, sig) => {
      finish(() => {
        if (failure) return reject(failure);
        if (code !== 0) {
          const tail = err.trim().slice(-500);
          return reject(new HookRunError('exit', `exited with ${code ?? sig}${tail ? `: ${tail}` : ''}`));
        }
        resolve(Buffer.concat(out).toString('utf8'));
      });
    });
    if (opts.signal?.aborted) onAbort();
    child.stdin.end(body);
  });
}

/**
 * POSTs `body` to an HTTP hook and returns the response text.
 *
 * @throws {HookRunError} on a network error, timeout, non-2xx status or oversized body.
 */
export async function runHttpHook(hook: HttpHook, body: string, opts: HookRunnerOptions): Promise<string> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  let res: Response;
  try {
    res = await fetch(hook.url, {
      method: 'POST',
      headers: { ...hook.headers, 'content-type': 'application/json', accept: 'application/json' },
      body,
      signal,
      redirect: 'error',
    });
  } catch (e) {
    if (timeout.aborted) throw new HookRunError('timeout', `timed out after ${opts.timeoutMs} ms`, { cause: e });
    if (opts.signal?.aborted) throw new HookRunError('aborted', 'aborted', { cause: e });
    throw new HookRunError('http', `request failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  try {
    if (!res.ok) throw new HookRunError('http', `answered HTTP ${res.status}`);
    const text = await res.text();
    if (Buffer.byteLength(text) > MAX_HOOK_OUTPUT_BYTES) {
      throw new HookRunError('bad_output', `answered more than ${MAX_HOOK_OUTPUT_BYTES} bytes`);
    }
    return text;
  } catch (e) {
    if (e instanceof HookRunError) throw e;
    if (timeout.aborted) throw new HookRunError('timeout', `timed out after ${opts.timeoutMs} ms`, { cause: e });
    throw new HookRunError('http', `reading the answer failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    if (!res.bodyUsed) await res.body?.cancel().catch(() => {});
  }
}
