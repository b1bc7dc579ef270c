import { readFileSync } from 'node:fs';
import JSON5 from 'json5';
import type { CliOutcome } from './cli-admin.js';
import { ConfigError, configSecrets, parseConfig, type Config } from './config.js';
import { checkDataDir, checkModel, checkPort, checkSlack, checkTelegram, type Check } from './doctor-checks.js';

/** EX_CONFIG from sysexits.h. */
const EXIT_CONFIG = 78;
/** Exit codes above 63 mean other things (sysexits, signals): the failure count is capped here. */
const MAX_EXIT = 63;
const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}/g;
/** Stands in for an unset variable so the rest of the config can still be validated; long enough for every min length. */
const PLACEHOLDER = 'doctor-placeholder-for-an-unset-variable-0000000000';

/** Every `${VAR}` reference in a parsed config: its path and whether it has a default. */
function references(value: unknown, path: string[] = [], out: Array<{ name: string; path: string[]; hasDefault: boolean }> = []) {
  if (typeof value === 'string') {
    for (const m of value.matchAll(VAR_RE)) out.push({ name: m[1]!, path, hasDefault: m[2] !== undefined });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      references(v, [...path, String(i)], out);
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) references(v, [...path, k], out);
  }
  return out;
}

function render(file: string, checks: Check[], secrets: string[]): string {
  const scrub = (s: string) => secrets.reduce((acc, sec) => (sec.length >= 8 ? acc.split(sec).join('[redacted]') : acc), s);
  const lines = [`switchboard doctor: ${file}`];
  for (const c of checks) {
    const mark = c.skipped ? '-' : c.ok ? '✓' : '✗';
    lines.push(scrub(`${mark} ${c.title}${c.detail ? ` — ${c.detail}` : ''}`));
    if (!c.ok && !c.skipped && c.fix) lines.push(scrub(`    fix: ${c.fix}`));
  }
  const failed = checks.filter((c) => !c.ok && !c.skipped).length;
  lines.push(failed === 0 ? 'all checks passed' : `${failed} check${failed === 1 ? '' : 's'} failed`);
  return `${lines.join('\n')}\n`;
}

/**
 * `switchboard doctor`: checks a config before (or instead of) starting — the config is valid,
 * every `${VAR}` is set, the data dir is writable and no gateway holds it, the port is free, the
 * model API accepts the key (`GET /v1/models`, free), and each Telegram / Slack account's token is
 * accepted by its platform (`getMe`, `auth.test`). Prints a checklist with a fix per failure.
 * Exit: 78 for an invalid config, otherwise the number of failed checks (at most 63).
 */
export async function doctorCommand(file: string, env: NodeJS.ProcessEnv, cwd: string): Promise<CliOutcome> {
  const checks: Check[] = [];
  const invalid = (detail: string, fix: string): CliOutcome => {
    checks.push({ ok: false, title: 'config valid', detail, fix });
    return { code: EXIT_CONFIG, stdout: render(file, checks, []) };
  };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return invalid(
      `cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      'pass --config <file> or set SWITCHBOARD_CONFIG (default config/switchboard.json5)',
    );
  }
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (err) {
    return invalid(`not valid JSON5: ${(err as Error).message}`, 'fix the syntax at the position shown');
  }

  const refs = references(raw);
  const missing = new Map<string, string[]>();
  for (const r of refs) {
    const v = env[r.name];
    if (!r.hasDefault && (v === undefined || v === '') && !missing.has(r.name)) missing.set(r.name, r.path);
  }
  for (const [name, path] of missing) {
    checks.push({
      ok: false,
      title: `environment variable ${name} set`,
      detail: `used at ${path.join('.')}`,
      fix: `export ${name}=… before starting, or write \${${name}:-default} for an optional value`,
    });
  }
  if (missing.size === 0) checks.push({ ok: true, title: `environment variables set (${new Set(refs.map((r) => r.name)).size} referenced)` });

  let cfg: Readonly<Config>;
  try {
    cfg = parseConfig(text, { ...env, ...Object.fromEntries([...missing.keys()].map((k) => [k, PLACEHOLDER])) }, cwd);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return invalid(err.message, 'correct the keys named above (docs/configuration.md lists every key)');
  }
  checks.push({ ok: true, title: 'config valid' });
  const secrets = configSecrets(cfg).filter((s) => s !== PLACEHOLDER);

  checks.push(await checkDataDir(cfg.gateway.dataDir));
  checks.push(await checkPort(cfg.gateway.host, cfg.gateway.port));
  checks.push(
    cfg.model.apiKey === PLACEHOLDER ? { ok: false, skipped: true, title: 'model key not checked (its variable is not set)' } : await checkModel(cfg),
  );

  const usesUnset = (path: string[]) => refs.some((r) => missing.has(r.name) && r.path.join('.') === path.join('.'));
  const varsAt = (path: string[]) => refs.filter((r) => r.path.join('.') === path.join('.')).map((r) => r.name);
  for (const [id, acc] of Object.entries(cfg.channels.telegram?.accounts ?? {})) {
    const key = ['channels', 'telegram', 'accounts', id, 'token'];
    checks.push(
      usesUnset(key)
        ? { ok: false, skipped: true, title: `telegram:${id} bot token not checked (its variable is not set)` }
        : await checkTelegram(id, acc, key, varsAt),
    );
  }
  for (const [id, acc] of Object.entries(cfg.channels.slack?.accounts ?? {})) {
    const tokens: Array<{ method: 'auth.test' | 'apps.connections.open'; token: string; field: string }> = [
      { method: 'auth.test', token: acc.botToken, field: 'botToken' },
    ];
    if (acc.mode === 'socket' && acc.appToken) tokens.push({ method: 'apps.connections.open', token: acc.appToken, field: 'appToken' });
    for (const t of tokens) {
      const keyPath = ['channels', 'slack', 'accounts', id, t.field];
      checks.push(
        usesUnset(keyPath)
          ? { ok: false, skipped: true, title: `slack:${id} ${t.field} not checked (its variable is not set)` }
          : await checkSlack(id, acc.apiUrl, { method: t.method, token: t.token, keyPath }, varsAt),
      );
    }
  }
  const failed = checks.filter((c) => !c.ok && !c.skipped).length;
  return { code: Math.min(failed, MAX_EXIT), stdout: render(file, checks, secrets) };
}
