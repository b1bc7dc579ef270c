import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationText, formatUsdAxis } from '../src/format';
import { atScope, type Capability, capabilityState, firstSentence, limitOf, parseFieldValue, sinceParam } from '../src/policy-view';

const tool = (over: Partial<Capability> = {}): Capability => ({ id: 'exec', kind: 'tool', source: 'builtin', offeredTo: ['owner', 'admin'], ...over });

describe('policy and form helpers', () => {
  it('capability state at a scope: operator deny, offer-switch, role default, or nothing stored', () => {
    expect(capabilityState(tool(), 'role', 'member')).toEqual({ on: false, label: 'off' });
    expect(capabilityState(tool(), 'role', 'admin')).toEqual({ on: true, label: 'on' });
    expect(capabilityState(tool({ enabledAt: [{ kind: 'role', id: 'member' }] }), 'role', 'member')).toEqual({ on: true, label: 'on' });
    expect(capabilityState(tool({ disabledAt: [{ kind: 'role', id: 'admin', ruleId: 'r1' }] }), 'role', 'admin')).toEqual({ on: false, label: 'off' });
    expect(capabilityState(tool(), 'channel', 'telegram:main')).toEqual({ on: null, label: 'default' });
    expect(capabilityState(tool({ disabledAt: [{ kind: 'gateway' }] }), 'gateway', undefined as unknown as string)).toEqual({ on: false, label: 'off' });
    expect(atScope([{ kind: 'role', id: 'member' }], 'role', 'guest')).toBe(false);
  });

  it('policy field values are JSON; an error names the field', () => {
    expect(parseFieldValue('dmPolicy', '"pairing"')).toBe('pairing');
    expect(parseFieldValue('rateLimit', '{"perMinute":5}')).toEqual({ perMinute: 5 });
    expect(() => parseFieldValue('allowFrom', '[1,')).toThrow(/^allowFrom: not valid JSON/);
  });

  it('budget limits from form inputs', () => {
    expect(limitOf('', '')).toBeUndefined();
    expect(limitOf('1000', '')).toEqual({ tokens: 1000 });
    expect(limitOf(' ', '2.5')).toEqual({ usd: 2.5 });
    expect(() => limitOf('1.5', '')).toThrow(/whole number/);
    expect(() => limitOf('', '-1')).toThrow(/USD/);
    expect(() => limitOf('abc', '')).toThrow(/Tokens/);
  });

  it('the audit since filter reads the input as UTC', () => {
    expect(sinceParam('')).toBeUndefined();
    expect(sinceParam('2026-12-05T10:30')).toBe('2026-12-05T10:30:00.000Z');
    expect(sinceParam('garbage')).toBeUndefined();
  });

  it('descriptions, conversations and axis money', () => {
    expect(firstSentence('Read a file. Then more.')).toBe('Read a file.');
    expect(firstSentence('No stop')).toBe('No stop');
    expect(conversationText({ channel: 'telegram', account: 'main', id: '42', kind: 'dm' })).toBe('telegram:main:42 (dm)');
    expect(conversationText('telegram:main:42')).toBe('telegram:main:42');
    expect(conversationText({ channel: { x: 1 }, __proto__: null })).toBe('');
    expect(conversationText(null)).toBe('');
    expect(formatUsdAxis(0.012)).toBe('$0.0120');
    expect(formatUsdAxis(0)).toBe('$0');
    expect(formatUsdAxis(12)).toBe('$12');
  });

  it('never throws on hostile input (property)', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withObjectString: true }), fc.string(), (v, s) => {
        expect(typeof conversationText(v)).toBe('string');
        sinceParam(s);
        firstSentence(s);
      }),
    );
  });
});
