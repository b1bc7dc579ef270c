import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { describeNetworkCause, type DoctorCheck, SkillCatalog } from '@switchboard/core';
import { skillSettingsOf } from './config-skills.js';
import type { Config } from './config.js';
import { runningGateway } from './cli-remote.js';
import { tmpdir } from 'node:os';
import { DEFAULT_SANDBOX_LIMITS, describeSystemLayout, probeSandbox } from '@switchboard/tools';
import { BWRAP_MISSING, type ExecHost, runnerOptions } from './wiring/exec.js';

/** The time limit of each request the doctor makes (the model API, every channel module's checks). */
export const DOCTOR_TIMEOUT_MS = 10_000;

/** Data dir: a writable directory (or one that can be created) that no running gateway holds. */
export async function checkDataDir(dataDir: string): Promise<DoctorCheck> {
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
export async function checkPort(host: string, port: number): Promise<DoctorCheck> {
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
export async function checkModel(cfg: Readonly<Config>): Promise<DoctorCheck> {
  const base = (cfg.model.baseUrl || 'https://api.anthropic.com').replace(/\/+$/, '');
  const url = `${base}/v1/models`;
  const title = `model key accepted (GET ${url})`;
  if (!cfg.model.apiKey)
    return { ok: false, title, detail: 'no key is configured', fix: 'set model.apiKey in the config, or ANTHROPIC_API_KEY in the environment' };
  let res: Response;
  try {
    res = await fetch(url, { headers: { 'x-api-key': cfg.model.apiKey, 'anthropic-version': '2023-06-01' }, signal: AbortSignal.timeout(DOCTOR_TIMEOUT_MS) });
  } catch (err) {
    return { ok: false, title, detail: describeNetworkCause(err, url), fix: 'check model.baseUrl (or ANTHROPIC_BASE_URL) and that this host can reach it' };
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

/**
 * The `exec` sandbox: bwrap is found and runs `true` the way the gateway will (as root: dropping to
 * a `tools.exec.sandboxUser` uid), over a scratch workspace in the data dir when it exists. With
 * `tools.exec.sandbox: "none"` the check fails loudly: commands would run unsandboxed.
 */
export async function checkExec(cfg: Readonly<Config>, host: ExecHost): Promise<DoctorCheck> {
  const exec = cfg.tools.exec;
  const title = 'exec sandbox (bubblewrap) starts';
  if (exec.sandbox === 'none') {
    return {
      ok: false,
      title,
      detail: 'tools.exec.sandbox is "none": exec runs commands on this host without a sandbox (every call asks a person)',
      fix: 'set tools.exec.sandbox to "bwrap" (the default) and install bubblewrap',
    };
  }
  if (!host.bwrapPath)
    return { ok: false, title, detail: BWRAP_MISSING, fix: 'apt-get install bubblewrap (Dockerfile: see docs/operations.md), or set tools.exec.bwrapPath' };
  const scratchDir = existsSync(cfg.gateway.dataDir) && statSync(cfg.gateway.dataDir).isDirectory() ? cfg.gateway.dataDir : tmpdir();
  const probe = await probeSandbox({ ...runnerOptions(exec, host, await describeSystemLayout()), limits: DEFAULT_SANDBOX_LIMITS, scratchDir });
  if (probe.ok) return { ok: true, title: `${title} (${host.bwrapPath}${host.hostIsRoot ? `, commands as uids ${exec.sandboxUser.uids}` : ''})` };
  return {
    ok: false,
    title,
    detail: `${probe.reason}: ${probe.detail.split('\n')[0]?.slice(0, 300) ?? ''}`,
    fix: 'see docs/operations.md ("The exec sandbox"): in Docker, user namespaces need a seccomp profile that allows them; exec is not offered until this passes',
  };
}

/**
 * Skills (docs/skills.md): every configured skill directory is read as the gateway reads it at
 * start-up; each skipped skill folder is a failed line naming the folder, its config key and why.
 * Nothing configured: no line.
 */
export async function checkSkills(cfg: Readonly<Config>): Promise<DoctorCheck[]> {
  const settings = skillSettingsOf(cfg);
  const configured = settings.dirs.length + [...settings.agents.values()].reduce((n, a) => n + a.dirs.length, 0);
  if (configured === 0) return [];
  const catalog = await SkillCatalog.load(settings);
  const lines: DoctorCheck[] = catalog.problems.map((p) => ({
    ok: false,
    title: `skill ${p.path} loads`,
    detail: p.reason,
    fix: `fix its SKILL.md (front matter: name, description, optional allowed-tools; see docs/skills.md), or remove the folder from ${p.source}`,
  }));
  const count = catalog.all().length;
  lines.unshift({ ok: true, title: `skills: ${count} loaded from ${configured} director${configured === 1 ? 'y' : 'ies'}` });
  return lines;
}
