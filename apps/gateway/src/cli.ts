#!/usr/bin/env node
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROLES, SCOPES, type Role, type Scope } from '@switchboard/core';
import { openSqliteStorage } from '@switchboard/store';
import { createClientToken, createOperatorToken } from './bootstrap.js';
import { pairingCommand, principalsCommand, type CliOutcome } from './cli-admin.js';
import { ConfigError, configSecrets, loadConfig, type Config } from './config.js';
import { startGateway } from './gateway.js';
import { createLogger } from './logger.js';

/** EX_CONFIG from sysexits.h: supervisors should not restart on it. */
const EXIT_CONFIG = 78;

const USAGE = `usage:
  switchboard start [--config <file>]
  switchboard token create --kind client --principal <name> [--role owner|admin|member|guest] [--name <token name>] [--config <file>]
  switchboard token create --kind operator --scopes read,write,admin,approvals,pairing [--name <token name>] [--config <file>]
  switchboard principals list | create <name> [--role r] | set-role <name> <role> [--config <file>]
  switchboard backup <file> [--config <file>]   (online copy of the SQLite database)
  switchboard pairing list [--status s] [--channel type:account] | approve <code> [--role r] | reject <code>
      [--token <operator token>] [--config <file>]   (talks to the running gateway; or SWITCHBOARD_TOKEN)`;

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

async function start(configFile: string | undefined): Promise<void> {
  const cfg = readConfig(configFile);
  const log = createLogger(cfg.log.level, configSecrets(cfg));
  // Signals are handled from the start: one that arrives while starting (even right after the
  // `listening` line) shuts down once the gateway is up, instead of killing it mid-write.
  let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
  let early: NodeJS.Signals | undefined;
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
  gw = await startGateway(cfg, log, { configFile: configPath(configFile) }).catch((err: unknown) => {
    log.fatal({ err }, 'gateway failed to start');
    process.exit(1);
  });
  if (early) onSignal(early);
}

async function tokenCreate(values: Record<string, string | boolean | undefined>): Promise<void> {
  const cfg = readConfig(values.config as string | undefined);
  mkdirSync(cfg.gateway.dataDir, { recursive: true, mode: 0o700 });
  const storage = openSqliteStorage({ file: join(cfg.gateway.dataDir, 'switchboard.db') });
  try {
    const name = values.name as string | undefined;
    if (values.kind === 'client') {
      const principal = values.principal as string | undefined;
      if (!principal || !/^[A-Za-z0-9._@-]{1,64}$/.test(principal)) fail('--principal <name> is required (letters, digits, . _ @ -; at most 64)');
      const role = (values.role as string | undefined) ?? 'member';
      if (!ROLES.includes(role as Role)) fail(`--role must be one of ${ROLES.join(', ')}`);
      const r = await createClientToken(storage, principal, role as Role, name ?? `${principal}-client`);
      process.stdout.write(
        `${JSON.stringify({ kind: 'client', principal, principalId: r.principalId, tokenId: r.tokenId, createdPrincipal: r.createdPrincipal, secret: r.secret })}\n`,
      );
    } else if (values.kind === 'operator') {
      const scopes = String(values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s as Scope))) fail(`--scopes must list some of ${SCOPES.join(', ')}`);
      const r = await createOperatorToken(storage, name ?? 'operator', scopes as Scope[]);
      process.stdout.write(`${JSON.stringify({ kind: 'operator', scopes, tokenId: r.tokenId, secret: r.secret })}\n`);
    } else {
      fail(`--kind must be client or operator\n${USAGE}`);
    }
  } finally {
    storage.close();
  }
}

function openStorage(cfg: Readonly<Config>) {
  mkdirSync(cfg.gateway.dataDir, { recursive: true, mode: 0o700 });
  return openSqliteStorage({ file: join(cfg.gateway.dataDir, 'switchboard.db') });
}

function finish(out: CliOutcome): void {
  if (out.stdout) process.stdout.write(out.stdout);
  if (out.stderr) process.stderr.write(out.stderr);
  process.exitCode = out.code;
}

async function principals(args: string[], values: Record<string, string | boolean | undefined>): Promise<void> {
  const storage = openStorage(readConfig(values.config as string | undefined));
  try {
    finish(await principalsCommand(storage, args, values.role as string | undefined));
  } finally {
    storage.close();
  }
}

async function backup(file: string, values: Record<string, string | boolean | undefined>): Promise<void> {
  const storage = openStorage(readConfig(values.config as string | undefined));
  try {
    const target = resolve(file);
    // SQLite's online backup: consistent while the gateway keeps writing (WAL).
    await storage.db.backup(target);
    process.stdout.write(`${JSON.stringify({ backup: target })}\n`);
  } finally {
    storage.close();
  }
}

async function main(): Promise<void> {
  // Everything the gateway creates (database, credentials, endpoint) is private to this user.
  process.umask(0o077);
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        kind: { type: 'string' },
        principal: { type: 'string' },
        role: { type: 'string' },
        scopes: { type: 'string' },
        name: { type: 'string' },
        token: { type: 'string' },
        status: { type: 'string' },
        channel: { type: 'string' },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const [cmd, sub] = parsed.positionals;
  if (cmd === 'start') return start(parsed.values.config);
  if (cmd === 'token' && sub === 'create') return tokenCreate(parsed.values);
  if (cmd === 'principals') return principals(parsed.positionals.slice(1), parsed.values);
  if (cmd === 'backup' && sub && parsed.positionals.length === 2) return backup(sub, parsed.values);
  if (cmd === 'pairing') {
    const v = parsed.values;
    const cfg = readConfig(v.config);
    return finish(await pairingCommand(cfg.gateway.dataDir, parsed.positionals.slice(1), { role: v.role, token: v.token, status: v.status, channel: v.channel }, process.env));
  }
  fail(USAGE);
}

void main();
