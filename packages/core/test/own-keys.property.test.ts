import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalToolName,
  countUsage,
  decideGate,
  evaluateRules,
  hookMatches,
  matchToolName,
  ownValue,
  roleCeiling,
  scopesOf,
  toolMatchKind,
  validateRuleSet,
  type BoundaryPolicy,
  type RuleSet,
  type TurnUsage,
} from '../src/index.js';

// Names every plain object inherits, plus random strings: ids from outside (rooms, senders, tools,
// roles, models) must never find Object.prototype's members through a record lookup.
const INHERITED = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
];
const hostileId = fc.oneof(
  fc.constantFrom(...INHERITED),
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.constantFrom(...INHERITED).map((s) => `${s} `),
);
const numRuns = Number(process.env.SWB_PROPERTY_RUNS ?? 200);

const policy = (over: Partial<BoundaryPolicy> = {}): BoundaryPolicy => ({
  dmPolicy: 'allowlist',
  allowFrom: ['alice'],
  groupPolicy: 'allowlist',
  groups: { 'room-1': { requireMention: false, allowFrom: [] } } as BoundaryPolicy['groups'],
  requireMention: true,
  rateLimit: { burst: 10, perMinute: 20 },
  pairingRole: 'member',
  ...over,
});

describe('records keyed by outside input use own-property lookups', () => {
  it('ownValue finds only own entries', () => {
    fc.assert(
      fc.property(hostileId, (id) => {
        expect(ownValue({}, id)).toBeUndefined();
        expect(ownValue({ [id]: 7 }, id)).toBe(Object.hasOwn({ [id]: 7 }, id) ? 7 : undefined);
        expect(ownValue(undefined, id)).toBeUndefined();
      }),
      { numRuns },
    );
  });

  it('the boundary gate treats such room and sender ids as unlisted', () => {
    fc.assert(
      fc.property(hostileId, fc.boolean(), (id, mentioned) => {
        fc.pre(id !== 'room-1' && id !== 'alice' && id !== '*');
        const input = { isBot: false, mentioned, principalId: null, authenticated: false };
        expect(decideGate(policy(), { ...input, kind: 'room', externalId: 'alice', conversationId: id })).toMatchObject({
          decision: 'ignored',
          reason: 'this room is not on the allowlist',
        });
        // groupPolicy open: an unknown room falls back to the account's requireMention.
        const open = decideGate(policy({ groupPolicy: 'open' }), { ...input, kind: 'room', externalId: 'alice', conversationId: id });
        expect(open.decision).toBe(mentioned ? 'admitted' : 'ignored');
        expect(decideGate(policy(), { ...input, kind: 'dm', externalId: id, conversationId: `dm-${id}` }).decision).not.toBe('admitted');
      }),
      { numRuns },
    );
  });

  it('tool names, aliases, match kinds and hook matchers', () => {
    fc.assert(
      fc.property(hostileId, (name) => {
        expect(canonicalToolName(name, {})).toBe(canonicalToolName(name));
        expect(typeof canonicalToolName(name)).toBe('string');
        expect(['exact', 'path', 'command', 'domain', 'url']).toContain(toolMatchKind(name, { matchKinds: {} }));
        expect(typeof matchToolName('read_file', name)).toBe('boolean');
        expect(typeof matchToolName(name, 'read_file')).toBe('boolean');
        expect(typeof hookMatches(name, 'read_file')).toBe('boolean');
        expect(typeof hookMatches('read_file', name)).toBe('boolean');
      }),
      { numRuns },
    );
  });

  it('names of Object members are ordinary unknown tool names', () => {
    for (const name of INHERITED) {
      expect(canonicalToolName(name)).toBe(name);
      expect(canonicalToolName(name, { other: 'x' })).toBe(name);
      expect(toolMatchKind(name, { matchKinds: { other: 'path' } })).toBe('exact');
      expect(matchToolName('read_file', name)).toBe(false);
      expect(matchToolName(name, 'read_file')).toBe(false);
      expect(hookMatches('read_file', name)).toBe(false);
    }
  });

  it('roles, scopes and rules', () => {
    fc.assert(
      fc.property(hostileId, hostileId, (id, tool) => {
        expect(['default', 'plan', 'acceptEdits', 'dontAsk', 'bypassPermissions', 'auto']).toContain(roleCeiling(id));
        expect(roleCeiling(id)).toBe(['owner', 'admin', 'member', 'guest'].includes(id) ? roleCeiling(id) : 'default');
        const scopes = scopesOf({ agent: id, channel: id, conversation: id, role: id, principal: id, session: id });
        expect(scopes.map((s) => s.kind)).toEqual(['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session']);
        const rules: RuleSet = [{ scope: { kind: 'conversation', id: 'room-1' }, behavior: 'deny', rule: 'read_file', source: 'config' }];
        expect(evaluateRules(rules, tool, undefined, scopes).behavior).toBe('none');
        const bad = validateRuleSet([{ scope: { kind: 'gateway' }, behavior: id as never, rule: 'read_file', source: 'config' }]);
        expect(bad.length).toBe(['allow', 'ask', 'deny'].includes(id) ? 0 : 1);
      }),
      { numRuns },
    );
  });
});

describe('usage records keyed by the model name the API answered with', () => {
  it('count a model named like an Object member as its own entry, never on Object.prototype', () => {
    fc.assert(
      fc.property(hostileId, fc.nat(1000), (model, tokens) => {
        const u: TurnUsage = {
          inputTokens: 0,
          outputTokens: 0,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          models: {},
          retries: 0,
          fallbackUsed: false,
        };
        const usage = { inputTokens: tokens, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
        countUsage(u, { type: 'usage', model, usage });
        countUsage(u, { type: 'usage', model, usage });
        expect(Object.hasOwn(u.models, model)).toBe(true);
        expect(u.models[model]).toEqual({ calls: 2, inputTokens: 2 * tokens, outputTokens: 2 });
        expect(Object.getPrototypeOf(u.models)).toBe(Object.prototype);
        expect(JSON.parse(JSON.stringify(u.models))).toEqual({ [model]: { calls: 2, inputTokens: 2 * tokens, outputTokens: 2 } });
        expect(({} as Record<string, unknown>).calls).toBeUndefined();
      }),
      { numRuns },
    );
  });
});
