import { describe, expect, it } from 'vitest';
import {
  ROLE_MODE_CEILING,
  describeLimit,
  modeSettings,
  resolveMode,
  roleCeiling,
  canSetMode,
  type PermissionMode,
  type RoleCeilings,
  type ScopeModes,
} from '../../src/index.js';

const at = (mode: PermissionMode | undefined) => ({ id: 'x', mode });

describe('mode resolution per scope (gateway → agent → channel → conversation → role → principal → session)', () => {
  // [name, scopes, role, expected mode, scope that limits it]
  it.each<[string, ScopeModes, string, PermissionMode, string]>([
    ['nothing set: default, under the owner ceiling', {}, 'owner', 'default', 'default'],
    ['agent bypass, owner: bypass', { agent: at('bypassPermissions') }, 'owner', 'bypassPermissions', 'role'],
    ['agent bypass, member: capped by the role', { agent: at('bypassPermissions') }, 'member', 'acceptEdits', 'role'],
    ['agent bypass, guest: capped by the role', { agent: at('bypassPermissions') }, 'guest', 'default', 'role'],
    ['gateway caps the agent', { gateway: 'acceptEdits', agent: at('bypassPermissions') }, 'owner', 'acceptEdits', 'gateway'],
    ['channel account permissionMode lowers', { agent: at('bypassPermissions'), channel: at('dontAsk') }, 'owner', 'dontAsk', 'channel'],
    ['room mode lowers', { agent: at('bypassPermissions'), conversation: at('plan') }, 'owner', 'plan', 'conversation'],
    ['room mode cannot raise above the agent', { agent: at('default'), conversation: at('bypassPermissions') }, 'owner', 'default', 'agent'],
    [
      'room mode cannot raise above the channel',
      { agent: at('bypassPermissions'), channel: at('default'), conversation: at('acceptEdits') },
      'owner',
      'default',
      'channel',
    ],
    ['principal mode lowers', { agent: at('bypassPermissions'), principal: at('acceptEdits') }, 'owner', 'acceptEdits', 'principal'],
    [
      'principal mode cannot raise above the room',
      { agent: at('bypassPermissions'), conversation: at('default'), principal: at('bypassPermissions') },
      'owner',
      'default',
      'conversation',
    ],
    ['session mode lowers', { agent: at('bypassPermissions'), session: at('plan') }, 'owner', 'plan', 'session'],
    [
      'session mode cannot raise above the principal',
      { agent: at('bypassPermissions'), principal: at('dontAsk'), session: at('bypassPermissions') },
      'owner',
      'dontAsk',
      'principal',
    ],
    ['session cannot raise a guest above the role', { agent: at('bypassPermissions'), session: at('bypassPermissions') }, 'guest', 'default', 'role'],
    ['the least trusted scope wins; the broadest on a tie', { gateway: 'plan', agent: at('plan'), session: at('plan') }, 'owner', 'plan', 'gateway'],
    ['an unknown role gets the guest ceiling', { agent: at('bypassPermissions') }, 'stranger', 'default', 'role'],
    ['a scope without a mode sets nothing', { agent: at(undefined), channel: at(undefined) }, 'owner', 'default', 'default'],
  ])('%s', (_name, scopes, role, mode, limitedBy) => {
    const r = resolveMode(scopes, role);
    expect(r.mode).toBe(mode);
    expect(r.limitedBy).toBe(limitedBy);
    expect(r.ceiling).toBe(roleCeiling(role));
  });

  it('role ceilings are configuration: a lower owner ceiling caps the owner, a raised guest ceiling lets a guest go higher', () => {
    const ceilings: RoleCeilings = { ...ROLE_MODE_CEILING, owner: 'acceptEdits', guest: 'acceptEdits' };
    expect(resolveMode({ agent: at('bypassPermissions') }, 'owner', ceilings)).toMatchObject({
      mode: 'acceptEdits',
      ceiling: 'acceptEdits',
      limitedBy: 'role',
    });
    expect(resolveMode({ agent: at('bypassPermissions') }, 'guest', ceilings).mode).toBe('acceptEdits');
    // Unknown roles never get more than `default`, whatever the guest ceiling.
    expect(roleCeiling('stranger', ceilings)).toBe('default');
    expect(roleCeiling('stranger', { ...ROLE_MODE_CEILING, guest: 'plan' })).toBe('plan');
    expect(roleCeiling('__proto__', ceilings)).toBe('default');
    expect(canSetMode('owner', 'bypassPermissions', 'bypassPermissions', ceilings)).toEqual({
      ok: false,
      reason: 'the owner role may use at most acceptEdits mode',
    });
  });

  it('lists the applicable settings broad to narrow, with their scope ids', () => {
    expect(modeSettings({ session: { id: 's1', mode: 'plan' }, gateway: 'acceptEdits', conversation: { id: 'webhook:main:r1', mode: 'dontAsk' } })).toEqual([
      { scope: { kind: 'gateway' }, mode: 'acceptEdits' },
      { scope: { kind: 'conversation', id: 'webhook:main:r1' }, mode: 'dontAsk' },
      { scope: { kind: 'session', id: 's1' }, mode: 'plan' },
    ]);
  });

  it('names the limiting scope by its config key for refusals', () => {
    expect(describeLimit({ limitedBy: 'channel' }, 'owner')).toMatch(/permissionMode/);
    expect(describeLimit({ limitedBy: 'conversation' }, 'owner')).toMatch(/room/);
    expect(describeLimit({ limitedBy: 'role' }, 'member')).toMatch(/member role \(permissions\.roleCeilings\)/);
  });
});
