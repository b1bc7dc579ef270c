import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { GatewayProcess, WsClient, WsFrame } from '@switchboard/testkit';
import { personWorkspace } from './helpers.js';

/**
 * A person's workspace the sandboxed uid can enter (others get r-x): the gateway creates workspaces 0700, and
 * until workspace group ownership lands the uid commands run as could not even `cd` there.
 */
export function execWorkspace(gw: GatewayProcess, principalId?: string): string {
  const dir = personWorkspace(gw, principalId);
  // adds r-x for others, keeping whatever owner/group bits the gateway set
  chmodSync(dir, (statSync(dir).mode & 0o7777) | 0o005);
  return dir;
}

/**
 * A fifo in a workspace that a sandboxed command reads (`read line < NAME`): the test holds it open
 * read-write, so the command's open never blocks, and `release()` hands it one line. Nothing in the
 * test blocks on it: writes go into the pipe buffer.
 */
export class GateFifo {
  readonly path: string;
  private fd: number | undefined;
  constructor(dir: string, name: string) {
    this.path = join(dir, name);
    execFileSync('mkfifo', ['-m', '0666', this.path], { timeout: 5_000 });
    this.fd = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK);
  }
  /** Lets the command's `read` return `line`. */
  release(line = 'go'): void {
    if (this.fd !== undefined) writeSync(this.fd, `${line}\n`);
  }
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * A fifo in a workspace that a sandboxed command writes to (`echo ready > NAME`), read by the test
 * without blocking (held open read-write, so there is always a writer and never an early EOF).
 */
export class SignalFifo {
  readonly path: string;
  private readonly socket: Socket;
  private text = '';
  private readonly waiters = new Set<() => void>();
  constructor(dir: string, name: string) {
    this.path = join(dir, name);
    execFileSync('mkfifo', ['-m', '0666', this.path], { timeout: 5_000 });
    this.socket = new Socket({ fd: openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK), readable: true, writable: false });
    this.socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('utf8');
      for (const w of [...this.waiters]) w();
    });
    this.socket.on('error', () => undefined);
  }
  /** Resolves once `needle` was written into the fifo; rejects after `timeoutMs`. */
  waitFor(needle: string, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!this.text.includes(needle)) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`fifo ${this.path}: "${needle}" not written within ${timeoutMs} ms (got ${JSON.stringify(this.text)})`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
  close(): void {
    this.socket.destroy();
  }
}

/**
 * Approves every `approval_request` of `clientId` on `ws` as it arrives (so a test passes whether
 * or not the pipeline asks), recording each request. `stop()` ends it.
 */
export function autoApprove(ws: WsClient, clientId: string): { requests: WsFrame[]; stop(): void } {
  const requests: WsFrame[] = [];
  const onMessage = (data: Buffer) => {
    let frame: WsFrame;
    try {
      frame = JSON.parse(data.toString('utf8')) as WsFrame;
    } catch {
      return;
    }
    if (frame.type !== 'approval_request' || frame.clientId !== clientId) return;
    requests.push(frame);
    ws.send({ type: 'approve', approvalId: frame.approvalId, decision: 'allow' });
  };
  ws.ws.on('message', onMessage);
  return { requests, stop: () => ws.ws.off('message', onMessage) };
}

/** An `exec` tool call as the fake model sends it, bounded by its own `timeout`. */
export function execCall(id: string, command: string, timeout = 60_000) {
  return { toolUses: [{ name: 'exec', id, input: { command, timeout, description: `test ${id}` } }] };
}

/** The parsed JSON log line `msg` of the exec run for `toolUseId` (waits for it). */
export async function execLog(
  gw: GatewayProcess,
  msg: 'exec started' | 'exec finished',
  toolUseId: string,
  timeoutMs = 20_000,
): Promise<Record<string, unknown>> {
  const line = await gw.waitForLog((l) => l.includes(`"${msg}"`) && l.includes(toolUseId), timeoutMs);
  return JSON.parse(line) as Record<string, unknown>;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** `root` and every process below it now (from /proc). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = parentOf(Number(name));
    if (ppid !== undefined) children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    if (!existsSync(`/proc/${pid}`)) continue;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The pids of `pids` still alive (a zombie counts as gone). */
export function alive(pids: readonly number[]): number[] {
  return pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  });
}
