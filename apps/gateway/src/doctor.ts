import { readFileSync } from 'node:fs';
import JSON5 from 'json5';
import { describeNetworkCause, type ChannelModule, type DoctorCheck, type DoctorConfigSource, type DoctorDeps } from '@switchboard/core';
import type { CliOutcome } from './cli-admin.js';
import { CHANNEL_MODULES } from './config-channels.js';
import { ConfigError, configSecrets, parseConfig, type Config } from './config.js';
import { checkDataDir, checkExec, checkModel, checkPort, checkSkills, DOCTOR_TIMEOUT_MS } from './doctor-checks.js';
import { resolveExecHost } from './exec-host.js';
import { checkDatabase } from './doctor-database.js';

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

function render(file: string, checks: DoctorCheck[], secrets: string[]): string {
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

/** What the `${VAR}` references of one config value (by its full key path) say: their names, and whether one is unset. */
export type VariablesAt = (keyPath: readonly string[]) => Omit<DoctorConfigSource, 'key'>;

/** A thrown value's name for a message (`TypeError`), never its message (it may carry a URL); never throws. */
function errorName(err: unknown): string {
  try {
    return err instanceof Error ? err.name : typeof err;
  } catch {
    return 'unknown error';
  }
}

/**
 * Every channel module's `doctor` hook over its configured accounts (`channels.<type>.accounts`),
 * in module order (CHANNEL_MODULES unless given). A module without a hook or without accounts is
 * skipped (its check code is never loaded); a hook that rejects (a bug) adds one failed check
 * after the checks it gave.
 */
export async function channelChecks(
  channels: Readonly<Record<string, { readonly accounts?: Readonly<Record<string, unknown>> } | undefined>>,
  sourceOf: VariablesAt,
  modules: readonly ChannelModule[] = CHANNEL_MODULES,
): Promise<DoctorCheck[]> {
  const sections = new Map(Object.entries(channels));
  const out: DoctorCheck[] = [];
  for (const module of modules) {
    const accounts = sections.get(module.type)?.accounts;
    if (!module.doctor || !accounts || Object.keys(accounts).length === 0) continue;
    const deps: DoctorDeps = {
      timeoutMs: DOCTOR_TIMEOUT_MS,
      describeNetworkError: describeNetworkCause,
      configSource: (account, path) => {
        const keyPath = ['channels', module.type, 'accounts', account, ...path];
        return { key: keyPath.join('.'), ...sourceOf(keyPath) };
      },
    };
    try {
      for await (const check of await module.doctor.checkAccounts(accounts, deps)) out.push(check);
    } catch (err) {
      out.push({
        ok: false,
        title: `${module.type} accounts checked`,
        detail: `the check itself failed (${errorName(err)})`,
        fix: `this is a bug in the ${module.type} channel package: report it with this output`,
      });
    }
  }
  return out;
}

/**
 * `switchboard doctor`: checks a config before (or instead of) starting — the config is valid,
 * every `${VAR}` is set, the data dir is writable and no gateway holds it, the database answers
 * (PostgreSQL: reachable, migrations current), the port is free, the
 * model API accepts the key (`GET /v1/models`, free), the configured skills load, and each channel module with a `doctor` hook
 * checks its accounts' credentials with its platform. Prints a checklist with a fix per failure.
 * Exit: 78 for an invalid config, otherwise the number of failed checks (at most 63).
 */
export async function doctorCommand(file: string, env: NodeJS.ProcessEnv, cwd: string): Promise<CliOutcome> {
  const checks: DoctorCheck[] = [];
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
  checks.push(await checkDatabase(cfg, DOCTOR_TIMEOUT_MS));
  checks.push(await checkPort(cfg.gateway.host, cfg.gateway.port));
  checks.push(
    cfg.model.apiKey === PLACEHOLDER ? { ok: false, skipped: true, title: 'model key not checked (its variable is not set)' } : await checkModel(cfg),
  );

  const sourceOf: VariablesAt = (keyPath) => {
    const key = keyPath.join('.');
    const at = refs.filter((r) => r.path.join('.') === key);
    return { variables: at.map((r) => r.name), unset: at.some((r) => missing.has(r.name)) };
  };
  checks.push(await checkExec(cfg, resolveExecHost(cfg.tools.exec, env.PATH, process.getuid?.())));
  checks.push(...(await checkSkills(cfg)));
  checks.push(...(await channelChecks(cfg.channels, sourceOf)));
  const failed = checks.filter((c) => !c.ok && !c.skipped).length;
  return { code: Math.min(failed, MAX_EXIT), stdout: render(file, checks, secrets) };
}
