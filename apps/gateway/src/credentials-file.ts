import { existsSync, renameSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The first-start credentials file's name inside the data dir (JSON, mode 0600). */
export const CREDENTIALS_FILE = 'credentials.json';

/** The name older versions used (no extension: `require()` parsed it as JavaScript). */
const LEGACY_CREDENTIALS_FILE = 'credentials';

/** `<dataDir>/credentials.json`. */
export function credentialsPath(dataDir: string): string {
  return join(dataDir, CREDENTIALS_FILE);
}

/** What `adoptLegacyCredentials` did. */
export type LegacyCredentials = { renamed: true; from: string; to: string } | { renamed: false; kept?: string };

/**
 * Renames an existing `<dataDir>/credentials` (written by older versions) to `credentials.json`,
 * so the documented one-liner finds it. When both exist, nothing is moved and the old file's path
 * is returned in `kept` for a warning. Call before anything reads or writes the credentials.
 */
export function adoptLegacyCredentials(dataDir: string): LegacyCredentials {
  const from = join(dataDir, LEGACY_CREDENTIALS_FILE);
  const to = credentialsPath(dataDir);
  if (!existsSync(from)) return { renamed: false };
  if (existsSync(to)) return { renamed: false, kept: from };
  renameSync(from, to);
  return { renamed: true, from, to };
}

/** A path as the user should type it from `cwd`: relative (`./data/…`) when inside it. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? `./${rel}` : path;
}

/** A string as one POSIX shell word: as is when plainly safe, else single-quoted. */
function shellWord(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The command that prints the owner's client token from the credentials file (never the token itself). */
export function clientTokenCommand(file: string, cwd = process.cwd()): string {
  return `node -p '${`require(${JSON.stringify(displayPath(file, cwd))}).clientToken`.replace(/'/g, `'\\''`)}'`;
}

/**
 * A ready-to-paste command that chats with the gateway as the owner. It reads the token from the
 * credentials file when it runs, so the command itself never contains a secret. Uses the
 * checkout's `scripts/chat.mjs` when it exists; otherwise only the token command is useful.
 */
export function chatCommand(file: string, dataDir: string, cwd = process.cwd()): string | undefined {
  const script = fileURLToPath(new URL('../../../scripts/chat.mjs', import.meta.url));
  if (!existsSync(script)) return undefined;
  const data = displayPath(dataDir, cwd);
  const dataEnv = data === './data' ? '' : `SWITCHBOARD_DATA_DIR=${shellWord(data)} `;
  return `${dataEnv}SWITCHBOARD_CLIENT_TOKEN="$(${clientTokenCommand(file, cwd)})" node ${shellWord(displayPath(script, cwd))} "hello"`;
}

/** The subset of a pino logger these notices use. */
interface NoticeLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Logs what `adoptLegacyCredentials` did (nothing when there was no old file). */
export function logLegacyCredentials(log: NoticeLog, result: LegacyCredentials): void {
  if (result.renamed) log.info({ event: 'credentials_renamed', from: result.from, file: result.to }, `renamed ${result.from} to ${result.to}`);
  else if (result.kept) log.warn({ event: 'credentials_renamed', file: result.kept }, `${result.kept} is an old copy of ${CREDENTIALS_FILE}: delete it`);
}

/**
 * The first-start notice: where the credentials are and a ready-to-paste chat command that reads
 * the client token from the file (the notice never contains a secret).
 */
export function logCredentialsCreated(log: NoticeLog, file: string, dataDir: string, cwd = process.cwd()): void {
  const token = clientTokenCommand(file, cwd);
  const chat = chatCommand(file, dataDir, cwd);
  log.info(
    { event: 'credentials_created', file, tokenCommand: token, ...(chat ? { chatCommand: chat } : {}) },
    chat
      ? `first start: credentials written to ${file}; chat as the owner with: ${chat}`
      : `first start: credentials written to ${file}; the owner's client token: ${token}`,
  );
}
