import type { ConfigSource } from './channel.js';

/**
 * One line of `switchboard doctor`'s checklist: `✓ title`, `✗ title — detail` followed by
 * `fix: …`, or `- title` for a skipped check. Skipped checks are shown but not counted as failures
 * (set `ok: false` with them). No field may carry a secret: the gateway scrubs the config's secrets
 * from the output as a second line of defence, not as the first.
 */
export interface DoctorCheck {
  ok: boolean;
  /** Not run (e.g. its `${VAR}` is unset and the value is a placeholder); shown with `-`, not counted. */
  skipped?: boolean;
  title: string;
  /** Why it failed (or what passed), after ` — `; the host and cause of a network error, never its URL. */
  detail?: string;
  /** Printed under a failed check: what to change, naming the config key (and the `${VAR}` it came from). */
  fix?: string;
}

/** Where one config value came from, as the doctor sees it (see {@link DoctorDeps.configSource}). */
export interface DoctorConfigSource extends ConfigSource {
  /**
   * True when a `${VAR}` in this value is not set in the environment: the doctor validated the
   * config with a placeholder in its place, so a check of this value must be skipped, saying
   * `… not checked (its variable is not set)`.
   */
  unset: boolean;
}

/** What the gateway gives a channel module's doctor hook. */
export interface DoctorDeps {
  /** Time limit of one platform request in milliseconds (`AbortSignal.timeout`). */
  readonly timeoutMs: number;
  /**
   * The config key of a value of one account (`path` relative to the account, e.g. `['token']`
   * → `channels.telegram.accounts.main.token`), the `${VAR}` names it was read from (never
   * values) and whether one of them is unset.
   */
  configSource(account: string, path: readonly string[]): DoctorConfigSource;
  /**
   * A failed request's cause without its URL (`ECONNREFUSED 127.0.0.1:8081`, `timed out
   * api.telegram.org`): pass the rejection and the URL requested (or its root). Never throws;
   * the result names only the URL's host. The gateway passes {@link describeNetworkCause}.
   */
  describeNetworkError(err: unknown, url: string): string;
}

/**
 * A channel module's `doctor` hook: checks its accounts' credentials against the platform,
 * without starting a channel.
 *
 * - When: `switchboard doctor` calls `checkAccounts` once per module that has at least one
 *   configured account, in module order, with the parsed accounts (keyed by account id, in config order).
 * - Guarantees: one or more {@link DoctorCheck}s per account, in account order; titles start
 *   with `<type>:<account>`; a value whose variable is unset ({@link DoctorConfigSource.unset})
 *   gives a skipped check and no request; only free, side-effect-free platform calls
 *   (`getMe`, `auth.test`); each request is limited to {@link DoctorDeps.timeoutMs}.
 * - Must not: print a secret (a token, a URL that carries one): network errors go through
 *   {@link DoctorDeps.describeNetworkError}; start a channel or keep a connection open.
 * - Errors: a refused credential or an unreachable platform is a failed check, not a rejection.
 *   A rejection (a bug) is reported by the gateway as one failed check for the module.
 * - Cost: the module's `./module` entry stays light: the hook imports its check code when called.
 */
export interface ChannelDoctor<Account = unknown> {
  checkAccounts(accounts: Readonly<Record<string, Account>>, deps: DoctorDeps): AsyncIterable<DoctorCheck> | Promise<readonly DoctorCheck[]>;
}

/** Reads one property; a throwing getter or proxy trap reads as undefined. */
function read(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** `value instanceof Error`, false where a proxy's `getPrototypeOf` trap throws. */
function isError(value: unknown): value is Error {
  try {
    return value instanceof Error;
  } catch {
    return false;
  }
}

/** Replaces every whitespace-delimited word with a `/` in it (URLs, paths: a Telegram URL carries the bot token) with `[url]`. */
function dropUrls(text: string): string {
  return text
    .split(/(\s+)/)
    .map((word) => (word.includes('/') ? '[url]' : word))
    .join('');
}

/** The host of a URL, or `the configured host` when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured host';
  }
}

/**
 * A failed request's cause without its URL: `<cause> <host>`, e.g. `ENOTFOUND api.telegram.org`,
 * `ECONNREFUSED 127.0.0.1:8081`, `timed out api.slack.com`, or `request failed <host>`. The cause is
 * the `code` of the error's `cause` (fetch puts the socket error there), `timed out` for a
 * `TimeoutError`, else the cause's message (at most 100 characters). Anything read from the error
 * has its URLs and paths replaced with `[url]`; the host comes from `url` (no credentials, no path).
 * Total: any thrown value, a missing field, a throwing getter or a hostile proxy gives a string.
 */
export function describeNetworkCause(err: unknown, url: string): string {
  const host = hostOf(typeof url === 'string' ? url : '');
  try {
    const error = isError(err);
    const rawCause = error ? read(err, 'cause') : undefined;
    const cause = rawCause && typeof rawCause === 'object' ? rawCause : undefined;
    const code = read(cause, 'code');
    const message = read(cause, 'message');
    const what =
      typeof code === 'string'
        ? dropUrls(code).slice(0, 100)
        : error && read(err, 'name') === 'TimeoutError'
          ? 'timed out'
          : typeof message === 'string' && message !== ''
            ? dropUrls(message).slice(0, 100)
            : 'request failed';
    return `${what} ${host}`;
  } catch {
    return `request failed ${host}`;
  }
}

/** A value's config key and where it came from, for a fix line: `channels.slack.accounts.team.botToken (from $SLACK_BOT_TOKEN)`. */
export function describeConfigSource(source: ConfigSource): string {
  const vars = source.variables.length > 0 ? ` (from ${source.variables.map((v) => `$${v}`).join(', ')})` : '';
  return `${source.key}${vars}`;
}
