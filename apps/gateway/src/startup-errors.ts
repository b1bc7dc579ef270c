import { SwbError, SwbErrorCode } from '@switchboard/core';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';

/** EX_CONFIG (sysexits.h): the configuration (or the environment it names) is wrong; supervisors should not restart. */
export const EXIT_CONFIG = 78;
/** EX_TEMPFAIL (sysexits.h): another gateway holds the data dir; try again once it has stopped. */
export const EXIT_LOCKED = 75;

/**
 * A start-up failure the operator fixes in the config: the message names the key, its
 * environment variable and the fix, never an errno code or a stack.
 */
export class StartupError extends SwbError {
  constructor(
    message: string,
    /** The config key at fault (`gateway.port`). */
    readonly key: string,
    readonly exitCode = EXIT_CONFIG,
  ) {
    super(SwbErrorCode.Startup, message);
    this.name = 'StartupError';
  }
}

const code = (err: unknown) => (typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '');

const DATA_DIR_FIX = 'set gateway.dataDir (or SWITCHBOARD_DATA_DIR) to a directory this user can write';

/**
 * Makes sure the data dir is a directory this process can write (creating it, mode 0700, if
 * missing), before anything is written into it; a problem is a {@link StartupError} naming
 * `gateway.dataDir` / `SWITCHBOARD_DATA_DIR`.
 */
export function prepareDataDir(dataDir: string): void {
  const user = process.getuid ? ` (uid ${process.getuid()})` : '';
  let isFile = false;
  try {
    isFile = !statSync(dataDir).isDirectory();
  } catch {
    // missing (created below) or unreadable (mkdir says which)
  }
  if (isFile) throw new StartupError(`gateway.dataDir: ${dataDir} is a file, not a directory; ${DATA_DIR_FIX}`, 'gateway.dataDir');
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const c = code(err);
    const why =
      c === 'ENOTDIR' || c === 'EEXIST'
        ? 'a part of the path is a file, not a directory'
        : c === 'EROFS'
          ? 'it is on a read-only file system'
          : c === 'EACCES' || c === 'EPERM'
            ? `this user${user} may not create or write it`
            : `it cannot be created or written (${err instanceof Error ? err.message : String(err)})`;
    throw new StartupError(`gateway.dataDir: cannot use ${dataDir} as the data dir: ${why}; ${DATA_DIR_FIX}`, 'gateway.dataDir');
  }
}

/**
 * Explains a failed listen by the key to change; other errors are returned as they are.
 * Port in use is a configuration problem (exit 78, not 75): the port belongs to another program
 * (or a gateway on another data dir), and a restart loop cannot free it — a gateway on the same
 * data dir is refused earlier, by the instance lock, with 75.
 */
export function listenError(err: unknown, host: string, port: number, section: 'gateway' | 'metrics' = 'gateway'): unknown {
  const c = code(err);
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  // The gateway's own keys can also be set from the environment.
  const portEnv = section === 'gateway' ? ' (or SWITCHBOARD_PORT' : '';
  const hostEnv = section === 'gateway' ? ' (or SWITCHBOARD_HOST)' : '';
  if (c === 'EADDRINUSE') {
    return new StartupError(
      `${section}.port: port ${port} on ${host} is already in use by another program; stop it, or choose another port with ${section}.port${portEnv ? `${portEnv}; ` : ' ('}0 picks a free one)`,
      `${section}.port`,
    );
  }
  if (c === 'EACCES' || c === 'EPERM') {
    return new StartupError(
      `${section}.port: this user may not listen on ${where} (ports below 1024 need privileges); choose another port with ${section}.port${portEnv ? `${portEnv})` : ''}`,
      `${section}.port`,
    );
  }
  if (c === 'EADDRNOTAVAIL' || c === 'ENOTFOUND' || c === 'EAI_AGAIN') {
    return new StartupError(
      `${section}.host: ${host} is not an address of this machine; set ${section}.host${hostEnv} to one, e.g. 127.0.0.1`,
      `${section}.host`,
    );
  }
  return err;
}
