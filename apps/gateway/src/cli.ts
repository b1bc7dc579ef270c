#!/usr/bin/env node
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Storage } from '@switchboard/core';
import { openSqliteStorage } from '@switchboard/store';
import { pairingCommand, principalsCommand, type CliOutcome } from './cli-admin.js';
import { HELP, USAGE } from './cli-help.js';
import { migrateStorageCommand } from './cli-migrate-storage.js';
import { dataDirOf } from './cli-remote.js';
import { statusCommand } from './cli-status.js';
import { principalChange, tokenCreate, tokenList, tokenRevoke, type AdminContext } from './cli-tokens.js';
import { ConfigError, configSecrets, loadConfig, type Config } from './config.js';
import { doctorCommand } from './doctor.js';
import { startGateway, type Gateway } from './gateway.js';
import { resolveExecHost } from './exec-host.js';
import { InstanceLockedError } from './instance-lock.js';
import { installProcessGuard } from './process-guard.js';
import { createLogger } from './logger.js';
import type { Logger } from 'pino';
import { EXIT_LOCKED, StartupError } from './startup-errors.js';

/** EX_CONFIG from sysexits.h: supervisors should not restart on it. */
const EXIT_CONFIG = 78;

function fail(message: string, code = 2): never {
  process.stderr.write(`switchboard: ${message}\n`);
  process.exit(code);
}

/** The config file in use: --config, SWITCHBOARD_CONFIG, or the default. */
function configPath(file: string | undefined): string {
  return resolve(file ?? process.env.SWITCHBOARD_CONFIG ?? 'config/switchboard.json5');
}

function readConfig(file: string | undefined): Readonly<Config> {
  const path = configPath(file);
  try {
    return loadConfig(path, process.env, process.cwd());
  } catch (err) {
    if (err instanceof ConfigError) fail(`${err.message}\n(config file: ${path})`, EXIT_CONFIG);
    throw err;
  }
}

/** The data dir alone: admin commands work on the database and need no channel secrets. */
function readDataDir(file: string | undefined): string {
  const path = configPath(file);
  try {
    return dataDirOf(path, process.env, process.cwd());
  } catch (err) {
    if (err instanceof ConfigError) fail(`${err.message}\n(config file: ${path})`, EXIT_CONFIG);
    throw err;
  }
}

/** Reloads the config file into a running gateway (SIGHUP); an invalid file changes nothing. */
function reloadConfig(gw: Gateway, file: string, log: Logger): void {
  let next: Readonly<Config>;
  try {
    next = loadConfig(file, process.env, process.cwd());
  } catch (err) {
    // The same message as at start (ConfigError); the running config stays in force.
    const why = err instanceof ConfigError ? err.message : String(err);
    log.error({ event: 'config_reload_refused', file }, `config reload refused, the running config stays: ${why}`);
    return;
  }
  const { applied, needsRestart } = gw.reload(next);
  log.info({ event: 'config_reloaded', file, applied, needsRestart }, `config reloaded: ${applied.length} key(s) applied live`);
  if (needsRestart.length > 0) {
    log.warn({ event: 'config_needs_restart', keys: needsRestart }, `changed in the config file, needs a restart to apply: ${needsRestart.join(', ')}`);
  }
}

async function start(configFile: string | undefined): Promise<void> {
  const cfg = readConfig(configFile);
  const log = createLogger(cfg.log.level, configSecrets(cfg));
  const guard = installProcessGuard(log);
  // Signals are handled from the start: one that arrives while starting (even right after the
  // `listening` line) shuts down once the gateway is up, instead of killing it mid-write.
  let gw: Gateway | undefined;
  let early: NodeJS.Signals | undefined;
  // SIGHUP: reload the config file; live keys apply, the others wait for a restart.
  process.on('SIGHUP', () => {
    if (!gw)
      return void log.warn({ event: 'config_reload_refused' }, 'config reload ignored: the gateway is still starting; send SIGHUP again once it listens');
    reloadConfig(gw, configPath(configFile), log);
  });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!gw) {
      if (early) {
        log.warn({ signal }, 'second signal while starting: exiting at once');
        process.exit(130);
      }
      early = signal;
      log.info({ signal, event: 'stopping' }, 'signal while starting: stopping once started');
      return;
    }
    signals++;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting at once');
      process.exit(130);
    }
    log.info({ signal, event: 'stopping' }, 'shutting down');
    gw.close().then(
      () => {
        log.info({ event: 'stopped' }, 'gateway stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Hooks get a minimal environment: the PATH only, never the gateway's secrets.
  const started = await startGateway(cfg, log, {
    configFile: configPath(configFile),
    hookPath: process.env.PATH ?? '/usr/bin:/bin',
    exec: resolveExecHost(cfg.tools.exec, process.env.PATH, process.getuid?.()),
  }).catch((err: unknown) => {
    // A problem the operator fixes (a config key, another running gateway): the message alone, no stack.
    if (err instanceof StartupError || err instanceof InstanceLockedError) {
      const code = err instanceof StartupError ? err.exitCode : EXIT_LOCKED;
      log.fatal({ event: 'start_failed', ...(err instanceof StartupError ? { key: err.key } : {}) }, err.message);
      fail(err.message, code);
    }
    log.fatal({ err }, 'gateway failed to start');
    process.exit(1);
  });
  gw = started;
  guard.onFatal(() => started.close(), cfg.limits.shutdownGrace);
  if (early) onSignal(early);
}

function openStorage(dataDir: string) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return openSqliteStorage({ file: join(dataDir, 'switchboard.db') });
}

function finish(out: CliOutcome): void {
  if (out.stdout) process.stdout.write(out.stdout);
  if (out.stderr) process.stderr.write(out.stderr);
  process.exitCode = out.code;
}

type Values = Record<string, string | boolean | undefined>;
const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

function adminContext(values: Values): AdminContext {
  const dataDir = readDataDir(str(values.config));
  return {
    dataDir,
    tokenFlag: str(values.token),
    env: process.env,
    async withStorage<T>(fn: (storage: Storage) => Promise<T>): Promise<T> {
      const storage = openStorage(dataDir);
      try {
        return await fn(storage);
      } finally {
        storage.close();
      }
    },
  };
}

async function principals(args: string[], values: Values): Promise<void> {
  const [sub, name, role] = args;
  if ((sub === 'set-role' && name && role && args.length === 3) || (sub === 'delete' && name && args.length === 2)) {
    return finish(await principalChange(adminContext(values), sub, name, role));
  }
  const ctx = adminContext(values);
  finish(await ctx.withStorage((storage) => principalsCommand(storage, args, str(values.role))));
}

async function backup(file: string, values: Values): Promise<void> {
  const target = resolve(file);
  if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory()) {
    return finish({ code: 1, stderr: `switchboard: the directory ${dirname(target)} does not exist; create it first\n` });
  }
  if (existsSync(target) && values.force !== true) {
    return finish({ code: 1, stderr: `switchboard: ${target} already exists; pass --force to overwrite it\n` });
  }
  const ctx = adminContext(values);
  // Written next to the target and renamed over it: an existing file is replaced whole or not at all.
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    await ctx.withStorage(async (storage) => {
      // SQLite's online backup: consistent while the gateway keeps writing (WAL).
      await (storage as ReturnType<typeof openSqliteStorage>).db.backup(tmp);
    });
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    return finish({ code: 1, stderr: `switchboard: the backup to ${target} failed: ${err instanceof Error ? err.message : String(err)}\n` });
  }
  finish({ code: 0, stdout: `${JSON.stringify({ backup: target })}\n` });
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The command line, parsed (throws on an unknown option). */
function parseCommandLine() {
  return parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
      config: { type: 'string' },
      kind: { type: 'string' },
      principal: { type: 'string' },
      role: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      token: { type: 'string' },
      status: { type: 'string' },
      channel: { type: 'string' },
      expires: { type: 'string' },
      cascade: { type: 'boolean' },
      active: { type: 'boolean' },
      force: { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      url: { type: 'string' },
    },
  });
}

async function main(): Promise<void> {
  // Everything the gateway creates (database, credentials, endpoint) is private to this user.
  process.umask(0o077);
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine();
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const [cmd, sub] = parsed.positionals;
  const v = parsed.values;
  if (v.version) return void process.stdout.write(`${version()}\n`);
  if (v.help || cmd === 'help') {
    const topic = cmd === 'help' ? sub : cmd;
    const text = topic !== undefined && Object.hasOwn(HELP, topic) ? HELP[topic]! : USAGE;
    return void process.stdout.write(`${text}\n`);
  }
  if (cmd === 'start') return start(v.config);
  if (cmd === 'doctor' && parsed.positionals.length === 1) return finish(await doctorCommand(configPath(v.config), process.env, process.cwd()));
  if (cmd === 'status' && parsed.positionals.length === 1) return finish(await statusCommand(readDataDir(v.config), v.token, process.env));
  if (cmd === 'token' && sub === 'create') return finish(await tokenCreate(adminContext(v), v));
  if (cmd === 'token' && sub === 'list') return finish(await tokenList(adminContext(v), { kind: v.kind, active: v.active }));
  if (cmd === 'token' && sub === 'revoke' && parsed.positionals.length <= 3)
    return finish(await tokenRevoke(adminContext(v), parsed.positionals[2], v.cascade === true));
  if (cmd === 'principals') return principals(parsed.positionals.slice(1), v);
  if (cmd === 'migrate-storage' && parsed.positionals.length === 1) {
    const progress = (line: string) => void process.stderr.write(`${line}\n`);
    return finish(await migrateStorageCommand({ from: v.from, to: v.to, url: v.url }, configPath(v.config), process.env, process.cwd(), progress));
  }
  if (cmd === 'backup' && sub && parsed.positionals.length === 2) return backup(sub, v);
  if (cmd === 'pairing') {
    return finish(
      await pairingCommand(
        readDataDir(v.config),
        parsed.positionals.slice(1),
        { role: v.role, token: v.token, status: v.status, channel: v.channel },
        process.env,
      ),
    );
  }
  fail(cmd !== undefined && Object.hasOwn(HELP, cmd) ? HELP[cmd]! : USAGE);
}

void main();
