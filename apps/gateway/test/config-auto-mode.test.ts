import { describe, expect, it } from 'vitest';
import { policySettingsOf } from '../src/policy-settings.js';
import { configFailure, parseTestConfig } from './config-fixture.js';

describe('permissions.auto and the auto mode in the config', () => {
  it('defaults: the classifier uses the gateway model; admins may reach auto', () => {
    const cfg = parseTestConfig('{ model: { name: "big-model" } }');
    expect(cfg.permissions.roleCeilings).toEqual({ owner: 'bypassPermissions', admin: 'auto', member: 'acceptEdits', guest: 'default' });
    expect(policySettingsOf(cfg).auto).toEqual({
      model: 'big-model',
      fastTimeoutMs: 10_000,
      reasonTimeoutMs: 30_000,
      fastMaxTokens: 128,
      reasonMaxTokens: 1024,
    });
  });

  it('takes a cheaper model and durations; auto is a mode at every scope', () => {
    const cfg = parseTestConfig(
      '{ permissions: { mode: "auto", roleCeilings: { member: "auto" }, auto: { model: "small", fastTimeout: "2s", reasonTimeout: "500ms" } }, agents: { default: { mode: "auto" } } }',
    );
    expect(policySettingsOf(cfg).auto).toMatchObject({ model: 'small', fastTimeoutMs: 2_000, reasonTimeoutMs: 500 });
    expect(cfg.permissions.roleCeilings.member).toBe('auto');
    expect(cfg.agents.default!.mode).toBe('auto');
  });

  it.each([
    ['{ permissions: { auto: { fastTimeout: "100ms" } } }', /permissions\.auto\.fastTimeout.*at least 200ms/],
    ['{ permissions: { auto: { reasonTimeout: "1h" } } }', /permissions\.auto\.reasonTimeout.*at most 10min/],
    ['{ permissions: { auto: { model: "" } } }', /permissions\.auto\.model/],
    ['{ permissions: { auto: { fastMaxTokens: 100000 } } }', /permissions\.auto\.fastMaxTokens/],
    ['{ permissions: { auto: { extra: 1 } } }', /permissions\.auto/],
    ['{ permissions: { roleCeilings: { admin: "yolo" } } }', /permissions\.roleCeilings\.admin/],
  ])('refuses %s, naming the key', (text, message) => {
    expect(configFailure(text)).toMatch(message);
  });
});
