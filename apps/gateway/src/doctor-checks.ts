import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import type { Config } from './config.js';
import { runningGateway } from './cli-remote.js';

/** One line of the doctor's checklist. `skipped` checks are shown but not counted. */
export interface Check {
  ok: boolean;
  skipped?: boolean;
  title: string;
  detail?: string;
  fix?: string;
}

/** A failed request's cause without its URL (a Telegram URL carries the bot token): `ENOTFOUND api.telegram.org`. */
export function networkCause(err: unknown, url: string): string {
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return 'the configured host';
    }
  })();
  const cause = err instanceof Error && err.cause && typeof err.cause === 'object' ? (err.cause as { code?: unknown; message?: unknown }) : undefined;
  const code =
    typeof cause?.code === 'string'
      ? cause.code
      : err instanceof Error && err.name === 'TimeoutError'
        ? 'timed out'
        : typeof cause?.message === 'string' && cause.message !== ''
          ? cause.message.slice(0, 100)
          : 'request failed';
  return `${code} ${host}`;
}

/** Data dir: a writable directory (or one that can be created) that no running gateway holds. */
export async function checkDataDir(dataDir: string): Promise<Check> {
  const title = `data dir ${dataDir} writable and unlocked`;
  const fix = 'set gateway.dataDir (or SWITCHBOARD_DATA_DIR) to a directory this user can write';
  if (existsSync(dataDir)) {
    if (!statSync(dataDir).isDirectory()) return { ok: false, title, detail: 'it exists and is not a directory', fix };
    try {
      accessSync(dataDir, constants.W_OK | constants.X_OK);
    } catch {
      return { ok: false, title, detail: 'this user cannot write to it', fix };
    }
  } else {
    let parent = dirname(dataDir);
    while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
    try {
      if (!statSync(parent).isDirectory()) throw new Error('not a directory');
      accessSync(parent, constants.W_OK | constants.X_OK);
    } catch {
      return { ok: false, title, detail: `it does not exist and ${parent} is not a writable directory`, fix };
    }
  }
  const gw = await runningGateway(dataDir);
  if (gw.running)
    return {
      ok: false,
      title,
      detail: `a gateway is running on it (${gw.url ?? 'starting'})`,
      fix: 'stop that gateway first, or see what it does with: switchboard status',
    };
  return { ok: true, title };
}

/** The listen port is free on the configured host (port 0: the system picks one). */
export async function checkPort(host: string, port: number): Promise<Check> {
  const title = `port ${port} free on ${host}`;
  if (port === 0) return { ok: true, title: 'port 0: the system picks a free port' };
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(null)));
  });
  if (!err) return { ok: true, title };
  const fix =
    err.code === 'EACCES'
      ? 'ports below 1024 need privileges: set gateway.port (or SWITCHBOARD_PORT) to 1024 or above'
      : 'set gateway.port (or SWITCHBOARD_PORT) to a free port, or stop what listens on it';
  return { ok: false, title, detail: `${err.code ?? 'error'}: cannot listen on ${host}:${port}`, fix };
}

/** The model key, with the free `GET /v1/models` (never a billed request). */
export async function checkModel(cfg: Readonly<Config>): Promise<Check> {
  const base = (cfg.model.baseUrl || 'https://api.anthropic.com').replace(/\/+$/, '');
  const url = `${base}/v1/models`;
  const title = `model key accepted (GET ${url})`;
  if (!cfg.model.apiKey)
    return { ok: false, title, detail: 'no key is configured', fix: 'set model.apiKey in the config, or ANTHROPIC_API_KEY in the environment' };
  let res: Response;
  try {
    res = await fetch(url, { headers: { 'x-api-key': cfg.model.apiKey, 'anthropic-version': '2023-06-01' }, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    return { ok: false, title, detail: networkCause(err, url), fix: 'check model.baseUrl (or ANTHROPIC_BASE_URL) and that this host can reach it' };
  }
  const body = (await res.json().catch(() => undefined)) as { error?: { type?: unknown; message?: unknown } } | undefined;
  if (res.ok) return { ok: true, title };
  const why = typeof body?.error?.type === 'string' ? `${res.status} ${body.error.type}` : `HTTP ${res.status}`;
  if (res.status === 401 || res.status === 403)
    return { ok: false, title, detail: `the key was refused (${why})`, fix: 'check model.apiKey (or ANTHROPIC_API_KEY): a valid key for this API' };
  if (res.status === 404) {
    const hint = /\/v1$/.test(base)
      ? 'remove the /v1 suffix from model.baseUrl (the client adds /v1 itself)'
      : 'check model.baseUrl: the API root, without /v1';
    return { ok: false, title, detail: why, fix: hint };
  }
  return { ok: false, title, detail: why, fix: 'the model API answered with an error: check model.baseUrl and retry later' };
}

/** The env variables named by `${VAR}` in one raw config value, for the fix lines. */
export type VarsAt = (path: string[]) => string[];

const via = (vars: string[]) => (vars.length > 0 ? ` (from ${vars.map((v) => `$${v}`).join(', ')})` : '');

/** Telegram: `getMe` with the bot token. */
export async function checkTelegram(id: string, account: { token: string; apiRoot: string }, keyPath: string[], varsAt: VarsAt): Promise<Check> {
  const title = `telegram:${id} bot token accepted (getMe)`;
  const key = keyPath.join('.');
  const url = `${account.apiRoot}/bot${account.token}/getMe`;
  let body: { ok?: unknown; result?: { username?: unknown }; description?: unknown; error_code?: unknown } | undefined;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    body = (await res.json().catch(() => ({ ok: false, error_code: res.status }))) as typeof body;
  } catch (err) {
    return {
      ok: false,
      title,
      detail: networkCause(err, account.apiRoot),
      fix: `check channels.telegram.accounts.${id}.apiRoot and that this host can reach it`,
    };
  }
  if (body?.ok === true) return { ok: true, title: `${title}: @${String(body.result?.username ?? '?')}` };
  const why = `${typeof body?.error_code === 'number' ? body.error_code : 'error'} ${typeof body?.description === 'string' ? body.description : ''}`.trim();
  return { ok: false, title, detail: `Telegram refused it (${why})`, fix: `check ${key}${via(varsAt(keyPath))}: the token @BotFather gave this bot` };
}

/** Slack: `auth.test` with the bot token, or `apps.connections.open` with a Socket Mode app token (a ticket nobody uses expires). */
export async function checkSlack(
  id: string,
  apiUrl: string,
  t: { method: 'auth.test' | 'apps.connections.open'; token: string; keyPath: string[] },
  varsAt: VarsAt,
): Promise<Check> {
  const bot = t.method === 'auth.test';
  const title = `slack:${id} ${bot ? 'bot' : 'app'} token accepted (${t.method})`;
  const key = t.keyPath.join('.');
  const url = new URL(t.method, apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).toString();
  let body: { ok?: unknown; team?: unknown; user?: unknown; error?: unknown } | undefined;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      signal: AbortSignal.timeout(10_000),
    });
    body = (await res.json().catch(() => ({ ok: false, error: `HTTP ${res.status}` }))) as typeof body;
  } catch (err) {
    return { ok: false, title, detail: networkCause(err, url), fix: `check channels.slack.accounts.${id}.apiUrl and that this host can reach it` };
  }
  if (body?.ok === true) return { ok: true, title: bot ? `${title}: ${String(body.user ?? '?')} in ${String(body.team ?? '?')}` : title };
  const why = typeof body?.error === 'string' ? body.error.slice(0, 100) : 'error';
  const what = bot ? "the app's Bot User OAuth Token (xoxb-…)" : 'an app-level token (xapp-…) with the connections:write scope';
  return { ok: false, title, detail: `Slack refused it (${why})`, fix: `check ${key}${via(varsAt(t.keyPath))}: ${what}` };
}
