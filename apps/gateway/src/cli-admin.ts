import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { ROLES, type Role, type Storage } from '@switchboard/core';
import { principalService, principalView } from './api/principal-service.js';
import { apiRequest } from './cli-remote.js';
import { credentialsPath } from './credentials-file.js';

/** EX_UNAVAILABLE from sysexits.h: the running gateway could not be reached. */
export const EXIT_UNAVAILABLE = 69;

/** A command's result: what to print and the exit code. */
export interface CliOutcome {
  code: number;
  stdout?: string;
  stderr?: string;
}

const ok = (value: unknown): CliOutcome => ({ code: 0, stdout: `${JSON.stringify(value)}\n` });
/** A refused CLI command: `switchboard: <message>` on stderr, and its exit code. */
export const failed = (message: string, code = 1): CliOutcome => ({ code, stderr: `switchboard: ${message}\n` });

/** Who the audit log names for CLI changes: `cli:<os user>`. */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli:unknown';
  }
}

/**
 * `switchboard principals list | create <name> --role r`: works on the database directly (the
 * gateway may be running or not; SQLite WAL allows both), through the same service as the control
 * API, audited as `cli:<user>`. (`set-role` and `delete` are in `cli-tokens.ts`: they go through a
 * running gateway.)
 */
export async function principalsCommand(storage: Storage, args: readonly string[], role: string | undefined): Promise<CliOutcome> {
  const [sub, name] = args;
  const actor = cliActor();
  if (sub === 'list' && args.length === 1) {
    return ok({ principals: await Promise.all((await storage.principals.list()).map((p) => principalView(storage, p))) });
  }
  if (sub === 'create' && name && args.length === 2) {
    if (!/^[A-Za-z0-9._@-]{1,64}$/.test(name)) return failed('the name must be 1–64 letters, digits, ".", "_", "@" or "-"', 2);
    const r = role ?? 'member';
    if (!ROLES.includes(r as Role)) return failed(`--role must be one of ${ROLES.join(', ')}`, 2);
    const res = await principalService.create(storage, { name, role: r as Role }, actor);
    return res.ok ? ok({ principal: await principalView(storage, res.value) }) : failed(res.message);
  }
  return failed('usage: switchboard principals list | create <name> --role <role> | set-role <name> <role> | delete <name>', 2);
}

/** The running gateway's control-API base URL, from `<dataDir>/endpoint` (a wildcard bind is reached on loopback). */
export function endpointUrl(dataDir: string): string | null {
  try {
    const ep = JSON.parse(readFileSync(join(dataDir, 'endpoint'), 'utf8')) as { host?: string; port?: number };
    if (typeof ep.port !== 'number' || typeof ep.host !== 'string') return null;
    const host = ep.host === '0.0.0.0' ? '127.0.0.1' : ep.host === '::' ? '::1' : ep.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${ep.port}`;
  } catch {
    return null;
  }
}

/** The operator token: `--token`, then `SWITCHBOARD_TOKEN`, then the first-start credentials file (`credentials.json`, or the older `credentials`). */
export function operatorToken(dataDir: string, flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (flag) return flag;
  if (env.SWITCHBOARD_TOKEN) return env.SWITCHBOARD_TOKEN;
  for (const file of [credentialsPath(dataDir), join(dataDir, 'credentials')]) {
    try {
      const creds = JSON.parse(readFileSync(file, 'utf8')) as { operatorToken?: unknown };
      if (typeof creds.operatorToken === 'string') return creds.operatorToken;
    } catch {
      // missing or unreadable: try the next name
    }
  }
  return null;
}

async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<CliOutcome> {
  const a = await apiRequest(base, token, method, path, body);
  if (a.status === 0) return failed(a.message, EXIT_UNAVAILABLE);
  return a.ok ? { code: 0, stdout: `${a.text}\n` } : failed(a.message);
}

/**
 * `switchboard pairing list | approve <code> [--role r] | reject <code>`: calls the running
 * gateway's control API (approving must answer the held messages, which only the gateway can do).
 */
export async function pairingCommand(
  dataDir: string,
  args: readonly string[],
  opts: { role?: string | undefined; token?: string | undefined; status?: string | undefined; channel?: string | undefined },
  env: NodeJS.ProcessEnv,
): Promise<CliOutcome> {
  const [sub, code] = args;
  const usage = 'usage: switchboard pairing list [--status s] [--channel type:account] | approve <code> [--role r] | reject <code>';
  const shape = sub === 'list' ? args.length === 1 : (sub === 'approve' || sub === 'reject') && !!code && args.length === 2;
  if (!shape) return failed(usage, 2);
  if (opts.role !== undefined && !ROLES.includes(opts.role as Role)) return failed(`--role must be one of ${ROLES.join(', ')}`, 2);
  const base = endpointUrl(dataDir);
  if (!base) return failed(`no running gateway found (${join(dataDir, 'endpoint')} is missing); start it first`, EXIT_UNAVAILABLE);
  const token = operatorToken(dataDir, opts.token, env);
  if (!token) return failed('an operator token with the "pairing" scope is needed: --token <secret> or SWITCHBOARD_TOKEN', 2);
  if (sub === 'list') {
    const q = new URLSearchParams({ ...(opts.status ? { status: opts.status } : {}), ...(opts.channel ? { channel: opts.channel } : {}) }).toString();
    return call(base, token, 'GET', `/pairing${q ? `?${q}` : ''}`);
  }
  const path = `/pairing/${encodeURIComponent(code!.toUpperCase())}/${sub}`;
  return sub === 'approve' ? call(base, token, 'POST', path, opts.role ? { role: opts.role } : {}) : call(base, token, 'POST', path);
}
