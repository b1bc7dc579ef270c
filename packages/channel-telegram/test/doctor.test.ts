import { describeNetworkCause, type DoctorCheck, type DoctorDeps } from '@switchboard/core';
import { CANARY_TELEGRAM_TOKEN, closedPort, startBlackhole, startFakeTelegram, type FakeTelegram } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramAccountSchema } from '../src/account.js';
import { telegramModule } from '../src/module.js';

const WRONG = '999999:wrong-telegram-token-for-the-doctor-test';

/** Doctor deps as the gateway builds them: keys under `channels.telegram.accounts`, `${VAR}` names and unset ones by key. */
function doctorDeps(opts: { vars?: Record<string, string[]>; unset?: string[]; timeoutMs?: number } = {}): DoctorDeps {
  const vars = new Map(Object.entries(opts.vars ?? {}));
  return {
    timeoutMs: opts.timeoutMs ?? 10_000,
    describeNetworkError: describeNetworkCause,
    configSource: (account, path) => {
      const key = ['channels', 'telegram', 'accounts', account, ...path].join('.');
      return { key, variables: vars.get(key) ?? [], unset: (opts.unset ?? []).includes(key) };
    },
  };
}

/** Runs the module's doctor hook over raw account configs (parsed by the account schema, as the gateway does). */
async function check(raw: Record<string, Record<string, unknown>>, deps: DoctorDeps): Promise<DoctorCheck[]> {
  const accounts = Object.fromEntries(Object.entries(raw).map(([id, a]) => [id, telegramAccountSchema.parse(a)]));
  const hook = telegramModule.doctor;
  if (!hook) throw new Error('the Telegram module has no doctor hook');
  const out: DoctorCheck[] = [];
  for await (const c of await hook.checkAccounts(accounts, deps)) out.push(c);
  return out;
}

describe('Telegram doctor checks (getMe against a loopback fake Bot API)', () => {
  let tg: FakeTelegram;
  beforeAll(async () => {
    tg = await startFakeTelegram({ bots: [{ token: CANARY_TELEGRAM_TOKEN, username: 'swb_doctor_bot', first_name: 'Doctor' }] });
  });
  afterAll(async () => {
    await tg.close();
  });

  it('an accepted token names the bot; a refused one names the key and its variables; one check per account, in order', async () => {
    const before = tg.calls.length;
    const checks = await check(
      { main: { token: CANARY_TELEGRAM_TOKEN, apiRoot: tg.apiRoot }, bad: { token: WRONG, apiRoot: `${tg.apiRoot}/` } },
      doctorDeps({ vars: { 'channels.telegram.accounts.bad.token': ['TG_A', 'TG_B'] } }),
    );
    expect(checks).toEqual([
      { ok: true, title: 'telegram:main bot token accepted (getMe): @swb_doctor_bot' },
      {
        ok: false,
        title: 'telegram:bad bot token accepted (getMe)',
        detail: 'Telegram refused it (401 Unauthorized)',
        fix: 'check channels.telegram.accounts.bad.token (from $TG_A, $TG_B): the token @BotFather gave this bot',
      },
    ]);
    expect(tg.calls.slice(before).map((c) => `${c.method} ${c.bot ?? '<unknown>'}`)).toEqual(['getMe swb_doctor_bot', 'getMe <unknown>']);
    expect(JSON.stringify(checks)).not.toContain(CANARY_TELEGRAM_TOKEN.split(':')[1]);
  });

  it('a token whose variable is not set is skipped, without a request', async () => {
    const before = tg.calls.length;
    const checks = await check(
      { main: { token: CANARY_TELEGRAM_TOKEN, apiRoot: tg.apiRoot } },
      doctorDeps({ unset: ['channels.telegram.accounts.main.token'] }),
    );
    expect(checks).toEqual([{ ok: false, skipped: true, title: 'telegram:main bot token not checked (its variable is not set)' }]);
    expect(tg.calls.length).toBe(before);
  });

  it('a non-JSON answer and an envelope without a code are refusals with what is known', async () => {
    tg.failNext('getMe', { rawBody: '<html>bad gateway</html>', status: 502 });
    tg.failNext('getMe', { envelope: { ok: false } });
    const checks = await check(
      { a: { token: CANARY_TELEGRAM_TOKEN, apiRoot: tg.apiRoot }, b: { token: CANARY_TELEGRAM_TOKEN, apiRoot: tg.apiRoot } },
      doctorDeps(),
    );
    expect(checks.map((c) => [c.ok, c.detail])).toEqual([
      [false, 'Telegram refused it (502)'],
      [false, 'Telegram refused it (error)'],
    ]);
    expect(checks[0]?.fix).toBe('check channels.telegram.accounts.a.token: the token @BotFather gave this bot');
  });

  it('an unreachable or silent Bot API names host and cause and the apiRoot key, never the URL (it carries the token)', async () => {
    const port = await closedPort();
    const hole = await startBlackhole();
    try {
      const checks = await check(
        {
          down: { token: CANARY_TELEGRAM_TOKEN, apiRoot: `http://127.0.0.1:${port}` },
          silent: { token: CANARY_TELEGRAM_TOKEN, apiRoot: `http://127.0.0.1:${hole.port}` },
        },
        doctorDeps({ timeoutMs: 200 }),
      );
      expect(checks).toEqual([
        {
          ok: false,
          title: 'telegram:down bot token accepted (getMe)',
          detail: `ECONNREFUSED 127.0.0.1:${port}`,
          fix: 'check channels.telegram.accounts.down.apiRoot and that this host can reach it',
        },
        {
          ok: false,
          title: 'telegram:silent bot token accepted (getMe)',
          detail: `timed out 127.0.0.1:${hole.port}`,
          fix: 'check channels.telegram.accounts.silent.apiRoot and that this host can reach it',
        },
      ]);
      expect(hole.accepted).toBe(1);
      expect(JSON.stringify(checks)).not.toContain(CANARY_TELEGRAM_TOKEN.split(':')[1]);
    } finally {
      await hole.close();
    }
  });
});
