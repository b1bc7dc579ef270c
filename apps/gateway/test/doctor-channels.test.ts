import { readFileSync } from 'node:fs';
import type { ChannelModule, DoctorCheck, DoctorDeps } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CHANNEL_MODULES } from '../src/config-channels.js';
import { channelChecks, type VariablesAt } from '../src/doctor.js';

const accountSchema = z.strictObject({ token: z.string() });

/** A channel module whose doctor hook records what it was given and answers with `answer`. */
function fakeModule(
  type: string,
  answer: (accounts: Readonly<Record<string, { token: string }>>, deps: DoctorDeps) => ReturnType<NonNullable<ChannelModule['doctor']>['checkAccounts']>,
) {
  const calls: Array<{ accounts: Readonly<Record<string, { token: string }>>; deps: DoctorDeps }> = [];
  const module: ChannelModule<string, typeof accountSchema> = {
    type,
    accountSchema,
    createChannels: async () => [],
    doctor: {
      checkAccounts(accounts, deps) {
        calls.push({ accounts, deps });
        return answer(accounts, deps);
      },
    },
  };
  return { module, calls };
}

const noVariables: VariablesAt = () => ({ variables: [], unset: false });

describe('doctor: channel checks come from the channel modules', () => {
  it('runs each hook once over its accounts, in module order, streams or arrays alike; no accounts or no hook: not called', async () => {
    const streamed = fakeModule('alpha', async function* (accounts) {
      for (const id of Object.keys(accounts)) yield { ok: true, title: `alpha:${id}` };
    });
    const listed = fakeModule('beta', async (accounts) => Object.keys(accounts).map((id): DoctorCheck => ({ ok: false, title: `beta:${id}`, fix: 'x' })));
    const idle = fakeModule('gamma', async () => [{ ok: true, title: 'never' }]);
    const hookless: ChannelModule = { type: 'delta', accountSchema, createChannels: async () => [] };
    const checks = await channelChecks(
      {
        beta: { accounts: { b1: { token: 'b' } } },
        alpha: { accounts: { a1: { token: 'a' }, a2: { token: 'a' } } },
        gamma: { accounts: {} },
        delta: { accounts: { d: {} } },
      },
      noVariables,
      [streamed.module, listed.module, idle.module, hookless],
    );
    expect(checks).toEqual([
      { ok: true, title: 'alpha:a1' },
      { ok: true, title: 'alpha:a2' },
      { ok: false, title: 'beta:b1', fix: 'x' },
    ]);
    expect(streamed.calls.map((c) => Object.keys(c.accounts))).toEqual([['a1', 'a2']]);
    expect(listed.calls).toHaveLength(1);
    expect(idle.calls).toHaveLength(0);
  });

  it('deps name the full key, the variables it was read from, whether one is unset, the timeout and a URL-free cause', async () => {
    const seen: string[][] = [];
    const sourceOf: VariablesAt = (keyPath) => {
      seen.push([...keyPath]);
      return { variables: ['ALPHA_TOKEN'], unset: keyPath.at(-1) === 'token' };
    };
    const { module, calls } = fakeModule('alpha', async () => []);
    await channelChecks({ alpha: { accounts: { main: { token: 't' } } } }, sourceOf, [module]);
    const deps = calls[0]!.deps;
    expect(deps.configSource('main', ['token'])).toEqual({ key: 'channels.alpha.accounts.main.token', variables: ['ALPHA_TOKEN'], unset: true });
    expect(deps.configSource('main', ['apiRoot'])).toMatchObject({ key: 'channels.alpha.accounts.main.apiRoot', unset: false });
    expect(seen).toEqual([
      ['channels', 'alpha', 'accounts', 'main', 'token'],
      ['channels', 'alpha', 'accounts', 'main', 'apiRoot'],
    ]);
    expect(deps.timeoutMs).toBe(10_000);
    const err = new TypeError('fetch failed', { cause: new Error('to https://h.example/bot1:secret-token/getMe') });
    expect(deps.describeNetworkError(err, 'https://h.example/bot1:secret-token/getMe')).toBe('to [url] h.example');
  });

  it('a hook that throws part-way keeps the checks it gave and adds one failed check, without the thrown message', async () => {
    const { module } = fakeModule('alpha', async function* () {
      yield { ok: true, title: 'alpha:first' };
      throw new RangeError('https://h.example/bot1:secret-token/getMe');
    });
    const rejecting = fakeModule('beta', () => Promise.reject('not even an error'));
    const checks = await channelChecks({ alpha: { accounts: { a: { token: 't' } } }, beta: { accounts: { b: { token: 't' } } } }, noVariables, [
      module,
      rejecting.module,
    ]);
    expect(checks).toEqual([
      { ok: true, title: 'alpha:first' },
      {
        ok: false,
        title: 'alpha accounts checked',
        detail: 'the check itself failed (RangeError)',
        fix: 'this is a bug in the alpha channel package: report it with this output',
      },
      {
        ok: false,
        title: 'beta accounts checked',
        detail: 'the check itself failed (string)',
        fix: 'this is a bug in the beta channel package: report it with this output',
      },
    ]);
    expect(JSON.stringify(checks)).not.toContain('secret-token');
  });

  it('the doctor names no channel type: every channel check is a module hook', () => {
    const sources = ['doctor.ts', 'doctor-checks.ts'].map((f) => readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8'));
    for (const m of CHANNEL_MODULES) for (const text of sources) expect(text).not.toMatch(new RegExp(`\\b${m.type}\\b`, 'i'));
    expect(CHANNEL_MODULES.filter((m) => m.doctor).map((m) => m.type)).toEqual(['telegram', 'slack']);
  });
});
