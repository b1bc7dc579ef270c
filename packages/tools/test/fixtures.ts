import { mkdtempSync, realpathSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { AnyTool, ToolContext } from '@switchboard/agent';

/** A temp workspace plus a sibling directory outside it holding a secret. */
export interface Sandbox {
  ws: string;
  outside: string;
  secretFile: string;
  ctx(signal?: AbortSignal): ToolContext;
  /** Writes a file under the workspace, creating parents. */
  put(rel: string, content: string | Uint8Array): string;
}

const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export const SECRET = 'TOP-SECRET-OUTSIDE';

/** Creates a fresh sandbox, removed after the test. */
export function sandbox(): Sandbox {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'swb-tools-')));
  made.push(base);
  const ws = path.join(base, 'workspace');
  const outside = path.join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const secretFile = path.join(outside, 'secret.txt');
  writeFileSync(secretFile, `${SECRET}\n`);
  return {
    ws,
    outside,
    secretFile,
    ctx: (signal = new AbortController().signal) => ({ signal, toolUseId: 'tu_1', sessionId: 's', turnId: 't', agentId: 'a', workspace: ws }),
    put(rel, content) {
      const file = path.join(ws, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
  };
}

/** Parses raw input the way the loop does (defaults applied), then calls the tool. */
export async function run(tool: AnyTool, raw: unknown, ctx: ToolContext): Promise<string> {
  const out = await tool.call(tool.input.parse(raw), ctx);
  return out.content;
}

/** Calls the tool expecting a throw; returns the error. */
export async function fails(tool: AnyTool, raw: unknown, ctx: ToolContext): Promise<Error & { code?: string }> {
  try {
    await run(tool, raw, ctx);
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error(`${tool.name} was expected to fail`);
}

/** Asserts a message names nothing on the host outside the workspace. */
export function leaksNothing(message: string, s: Sandbox): boolean {
  const base = path.dirname(s.ws);
  return !message.includes(base) && !message.includes(SECRET) && !message.includes('/etc');
}
