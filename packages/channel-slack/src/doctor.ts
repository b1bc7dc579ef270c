import { describeConfigSource, type DoctorCheck, type DoctorDeps } from '@switchboard/core';
import type { SlackAccountConfig } from './account.js';

/** The account keys the Slack credential checks read. */
export type SlackDoctorAccount = Pick<SlackAccountConfig, 'botToken' | 'mode' | 'appToken' | 'apiUrl'>;

/** A Web API method the doctor calls: `auth.test` (bot token) or `apps.connections.open` (app token). */
export type SlackDoctorMethod = 'auth.test' | 'apps.connections.open';

/** One token to check: the method that proves it and its key relative to the account. */
export interface SlackDoctorToken {
  method: SlackDoctorMethod;
  token: string;
  field: 'botToken' | 'appToken';
}

/** What the Web API answers, as far as the check reads it (a peer's JSON: every field may be missing or wrong). */
interface SlackBody {
  ok?: unknown;
  team?: unknown;
  user?: unknown;
  error?: unknown;
}

/**
 * `switchboard doctor` for `channels.slack`: per account, the bot token with `auth.test` and, in
 * Socket Mode, the app token with `apps.connections.open` (a ticket nobody uses expires), each
 * against the account's `apiUrl`; a token whose variable is not set gives a skipped line instead.
 */
export async function* checkSlackAccounts(accounts: Readonly<Record<string, SlackDoctorAccount>>, deps: DoctorDeps): AsyncGenerator<DoctorCheck> {
  for (const [id, account] of Object.entries(accounts)) {
    const tokens: SlackDoctorToken[] = [{ method: 'auth.test', token: account.botToken, field: 'botToken' }];
    if (account.mode === 'socket' && account.appToken) tokens.push({ method: 'apps.connections.open', token: account.appToken, field: 'appToken' });
    for (const t of tokens) {
      yield deps.configSource(id, [t.field]).unset
        ? { ok: false, skipped: true, title: `slack:${id} ${t.field} not checked (its variable is not set)` }
        : await checkSlackToken(id, account.apiUrl, t, deps);
    }
  }
}

/** One token with the Web API method that proves it (POST, `Authorization: Bearer`: the token is never in the URL). */
export async function checkSlackToken(id: string, apiUrl: string, t: SlackDoctorToken, deps: DoctorDeps): Promise<DoctorCheck> {
  const bot = t.method === 'auth.test';
  const title = `slack:${id} ${bot ? 'bot' : 'app'} token accepted (${t.method})`;
  const url = new URL(t.method, apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).toString();
  let body: SlackBody | undefined;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    body = (await res.json().catch(() => ({ ok: false, error: `HTTP ${res.status}` }))) as SlackBody | undefined;
  } catch (err) {
    return {
      ok: false,
      title,
      detail: deps.describeNetworkError(err, url),
      fix: `check ${deps.configSource(id, ['apiUrl']).key} and that this host can reach it`,
    };
  }
  if (body?.ok === true) return { ok: true, title: bot ? `${title}: ${String(body.user ?? '?')} in ${String(body.team ?? '?')}` : title };
  const why = typeof body?.error === 'string' ? body.error.slice(0, 100) : 'error';
  const what = bot ? "the app's Bot User OAuth Token (xoxb-…)" : 'an app-level token (xapp-…) with the connections:write scope';
  return { ok: false, title, detail: `Slack refused it (${why})`, fix: `check ${describeConfigSource(deps.configSource(id, [t.field]))}: ${what}` };
}
