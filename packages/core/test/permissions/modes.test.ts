import { describe, expect, it } from 'vitest';
import { MODE_ORDER, ROLE_MODE_CEILING, canSetMode, effectiveMode, isPermissionMode, roleCeiling, type ModeSetting } from '../../src/index.js';

const set = (kind: ModeSetting['scope']['kind'], mode: ModeSetting['mode']): ModeSetting => ({ scope: { kind, id: 'x' }, mode });

describe('modes', () => {
  it('orders modes from least to most trusted', () => {
    expect(MODE_ORDER).toEqual(['plan', 'dontAsk', 'default', 'acceptEdits', 'auto', 'bypassPermissions']);
    expect(isPermissionMode('acceptEdits')).toBe(true);
    expect(isPermissionMode('auto')).toBe(true);
    expect(isPermissionMode('yolo')).toBe(false);
  });

  it('documents role ceilings', () => {
    expect(ROLE_MODE_CEILING).toEqual({ owner: 'bypassPermissions', admin: 'auto', member: 'acceptEdits', guest: 'default' });
    expect(roleCeiling('stranger')).toBe('default');
    // auto sits between acceptEdits and bypassPermissions: a member cannot reach it, an admin cannot go past it.
    expect(canSetMode('member', 'auto', 'bypassPermissions')).toEqual({ ok: false, reason: 'the member role may use at most acceptEdits mode' });
    expect(canSetMode('admin', 'auto', 'bypassPermissions')).toEqual({ ok: true });
    expect(canSetMode('admin', 'bypassPermissions', 'bypassPermissions')).toEqual({ ok: false, reason: 'the admin role may use at most auto mode' });
  });

  it.each<[string, ModeSetting[], ModeSetting['mode'], ModeSetting['mode']]>([
    ['no settings → default', [], 'bypassPermissions', 'default'],
    ['no settings, plan-only role', [], 'plan', 'plan'],
    ['a narrow scope may lower trust', [set('agent', 'acceptEdits'), set('session', 'plan')], 'bypassPermissions', 'plan'],
    ['a narrow scope may not raise above a broader one', [set('agent', 'default'), set('session', 'bypassPermissions')], 'bypassPermissions', 'default'],
    ['the role ceiling caps everything', [set('gateway', 'bypassPermissions')], 'acceptEdits', 'acceptEdits'],
    ['a session may raise up to the ceiling when nothing broader is set', [set('session', 'acceptEdits')], 'acceptEdits', 'acceptEdits'],
    ['dontAsk is below default', [set('channel', 'dontAsk'), set('session', 'default')], 'bypassPermissions', 'dontAsk'],
    ['order of the array does not matter', [set('session', 'plan'), set('gateway', 'acceptEdits')], 'bypassPermissions', 'plan'],
  ])('%s', (_name, settings, ceiling, expected) => {
    expect(effectiveMode(settings, ceiling)).toBe(expected);
  });

  it('lets a chat user lower but not raise their session mode beyond their role or the conversation', () => {
    expect(canSetMode('member', 'acceptEdits', 'acceptEdits')).toEqual({ ok: true });
    expect(canSetMode('member', 'plan', 'default')).toEqual({ ok: true });
    expect(canSetMode('member', 'bypassPermissions', 'bypassPermissions')).toEqual({ ok: false, reason: 'the member role may use at most acceptEdits mode' });
    expect(canSetMode('owner', 'bypassPermissions', 'default')).toEqual({ ok: false, reason: 'this conversation allows at most default mode' });
    expect(canSetMode('guest', 'acceptEdits', 'bypassPermissions').ok).toBe(false);
    expect(canSetMode('guest', 'dontAsk', 'default').ok).toBe(true);
  });
});
