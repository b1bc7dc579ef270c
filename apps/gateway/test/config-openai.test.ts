import { describe, expect, it } from 'vitest';
import { configFailure, parseTestConfig } from './config-fixture.js';

// Issue 18: a non-streaming OpenAI request is silent while it waits for an approval and the model,
// so the idle connection must outlive both.
describe('channels.openai config', () => {
  it('is refused when approvalWait + limits.modelRequestTimeout is not below gateway.connectionTimeout, naming the keys', () => {
    // The default approvalWait (60 s) + model timeout (60 s) against a connection timeout of 120 s.
    const msg = configFailure(`{ gateway: { connectionTimeout: '120s' }, channels: { openai: { accounts: { default: {} } } } }`);
    expect(msg).toContain('channels.openai.accounts.default.approvalWait');
    expect(msg).toContain('limits.modelRequestTimeout');
    expect(msg).toContain('gateway.connectionTimeout');
    const other = configFailure(
      `{ gateway: { connectionTimeout: '90s' }, limits: { modelRequestTimeout: '30s' }, channels: { openai: { accounts: { team: { approvalWait: '60s' } } } } }`,
    );
    expect(other).toContain(
      'channels.openai.accounts.team.approvalWait: 60000 ms + limits.modelRequestTimeout (30000 ms) must be below gateway.connectionTimeout (90000 ms)',
    );
  });

  it('is accepted with every default (60 s + 60 s is below the default 180 s), with the account defaults', () => {
    const cfg = parseTestConfig(`{ channels: { openai: { accounts: { default: {} } } } }`);
    expect(cfg.channels.openai?.accounts.default).toMatchObject({
      dmPolicy: 'allowlist',
      approvalWait: 60_000,
      pingInterval: 15_000,
      dedupeWindow: 600_000,
      maxBodyBytes: 1024 * 1024,
    });
    expect(
      parseTestConfig(`{ gateway: { connectionTimeout: '70s' }, channels: { openai: { accounts: { default: { approvalWait: '5s' } } } } }`).channels.openai
        ?.accounts.default?.approvalWait,
    ).toBe(5000);
  });

  it('refuses unknown keys and bad values, naming them', () => {
    expect(configFailure(`{ gateway: { connectionTimeout: '3m' }, channels: { openai: { accounts: { default: { apiKey: 'x' } } } } }`)).toContain(
      'channels.openai.accounts.default.apiKey',
    );
    expect(configFailure(`{ gateway: { connectionTimeout: '3m' }, channels: { openai: { accounts: { default: { pingInterval: 10 } } } } }`)).toContain(
      'channels.openai.accounts.default.pingInterval',
    );
  });
});
