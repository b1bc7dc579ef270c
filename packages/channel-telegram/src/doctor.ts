import { describeConfigSource, type DoctorCheck, type DoctorDeps } from '@switchboard/core';
import type { TelegramAccountConfig } from './account.js';

/** The account keys a Telegram credential check reads. */
export type TelegramDoctorAccount = Pick<TelegramAccountConfig, 'token' | 'apiRoot'>;

/** What `getMe` answers, as far as the check reads it (a peer's JSON: every field may be missing or wrong). */
interface GetMeBody {
  ok?: unknown;
  result?: { username?: unknown };
  description?: unknown;
  error_code?: unknown;
}

/**
 * `switchboard doctor` for `channels.telegram`: per account, `getMe` with its bot token against its
 * `apiRoot` (free, no side effect), or a skipped line when the token's variable is not set.
 */
export async function* checkTelegramAccounts(accounts: Readonly<Record<string, TelegramDoctorAccount>>, deps: DoctorDeps): AsyncGenerator<DoctorCheck> {
  for (const [id, account] of Object.entries(accounts)) {
    yield deps.configSource(id, ['token']).unset
      ? { ok: false, skipped: true, title: `telegram:${id} bot token not checked (its variable is not set)` }
      : await checkTelegramToken(id, account, deps);
  }
}

/** One account's bot token, with `getMe`. The request URL carries the token: only `apiRoot`'s host is ever shown. */
export async function checkTelegramToken(id: string, account: TelegramDoctorAccount, deps: DoctorDeps): Promise<DoctorCheck> {
  const title = `telegram:${id} bot token accepted (getMe)`;
  let body: GetMeBody | undefined;
  try {
    const res = await fetch(`${account.apiRoot}/bot${account.token}/getMe`, { signal: AbortSignal.timeout(deps.timeoutMs) });
    body = (await res.json().catch(() => ({ ok: false, error_code: res.status }))) as GetMeBody | undefined;
  } catch (err) {
    return {
      ok: false,
      title,
      detail: deps.describeNetworkError(err, account.apiRoot),
      fix: `check ${deps.configSource(id, ['apiRoot']).key} and that this host can reach it`,
    };
  }
  if (body?.ok === true) return { ok: true, title: `${title}: @${String(body.result?.username ?? '?')}` };
  const why = `${typeof body?.error_code === 'number' ? body.error_code : 'error'} ${typeof body?.description === 'string' ? body.description : ''}`.trim();
  return {
    ok: false,
    title,
    detail: `Telegram refused it (${why})`,
    fix: `check ${describeConfigSource(deps.configSource(id, ['token']))}: the token @BotFather gave this bot`,
  };
}
