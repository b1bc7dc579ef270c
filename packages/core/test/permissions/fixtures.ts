import type { AnyTool, PermissionResult, ToolContext } from '@switchboard/agent';
import { z } from 'zod';
import type { PermissionEnv, ScopedRule } from '../../src/index.js';

export const WS = '/srv/ws';

export function ctx(): ToolContext {
  return { signal: new AbortController().signal, toolUseId: 'tu_1', sessionId: 's1', turnId: 't1', agentId: 'main', workspace: WS };
}

const pathInput = z.strictObject({ path: z.string().min(1), content: z.string().optional() });

/** A file tool shaped like the built-ins: `path` input, path rule content. */
export function fileTool(name: string, readOnly: boolean, extra: Partial<AnyTool> = {}): AnyTool {
  return {
    name,
    description: name,
    input: pathInput,
    readOnly,
    concurrencySafe: readOnly,
    ruleContent: (input: { path: string }) => input.path,
    call: async () => ({ content: 'ok' }),
    ...extra,
  };
}

export const readFile = fileTool('read_file', true);
export const writeFile = fileTool('write_file', false);
export const editFile = fileTool('edit_file', false);

/** A non-file tool that changes things (like an MCP call). */
export const sendMail: AnyTool = {
  name: 'mcp__mail__send',
  description: 'send mail',
  input: z.strictObject({ to: z.string() }),
  readOnly: false,
  concurrencySafe: false,
  call: async () => ({ content: 'sent' }),
};

export const exec: AnyTool = {
  name: 'exec',
  description: 'run a command',
  input: z.strictObject({ command: z.string() }),
  readOnly: false,
  concurrencySafe: false,
  ruleContent: (input: { command: string }) => input.command,
  call: async () => ({ content: '' }),
};

/** A tool whose own check answers `result`. */
export function checkingTool(result: PermissionResult | (() => Promise<PermissionResult>), readOnly = false): AnyTool {
  return fileTool('guarded', readOnly, {
    checkPermissions: typeof result === 'function' ? result : async () => result,
  });
}

export function rule(behavior: ScopedRule['behavior'], text: string, scope: ScopedRule['scope'] = { kind: 'gateway' }): ScopedRule {
  return { scope, behavior, rule: text, source: 'config' };
}

export function env(extra: Partial<PermissionEnv> = {}): PermissionEnv {
  return {
    ruleSet: [],
    scopes: [{ kind: 'gateway' }, { kind: 'agent', id: 'main' }, { kind: 'principal', id: 'p1' }, { kind: 'session', id: 's1' }],
    mode: 'default',
    safety: { configFile: '/etc/switchboard/config.json5', databaseFile: `${WS}/data/switchboard.db` },
    ...extra,
  };
}
