import { describe, expect, it } from 'vitest';
import { CapabilityRegistry, type OfferContext, type OfferScope, preFilter, type Role, scopesOf } from '../../src/index.js';
import { exec, fileTool, readFile, rule, writeFile } from './fixtures.js';

// "Who may use it": a tool is offered when the speaker's role is in its offeredTo, or an
// offer-switch applies at one of the call's scopes; content-less deny rules still hide it.

const tools = [readFile, fileTool('list_files', true), writeFile, exec];
const registry = new CapabilityRegistry({ tools, mcpServers: [], channels: [], model: { name: 'm', baseUrl: '', apiKey: '' }, hooks: {} });
const names = (ts: Array<{ name: string }>) => ts.map((t) => t.name);

/** The scopes of a call by principal `p` with `role` in a DM of `telegram:main`. */
const call = (role: Role, principal = 'p1') =>
  scopesOf({ agent: 'default', channel: 'telegram:main', conversation: `telegram:main:${principal}`, role, principal, session: `s_${principal}` });

const offers = (role: Role, switches: OfferScope[] = []): OfferContext => ({ role, offeredTo: (tool) => registry.offeredTo(tool), switches });
const filter = (role: Role, switches: OfferScope[] = [], ruleSet = [] as ReturnType<typeof rule>[], principal = 'p1') =>
  names(preFilter(tools, ruleSet, call(role, principal), { offers: offers(role, switches) }));

describe('preFilter: offeredTo role defaults', () => {
  it('offers exec to owners and admins only, every other tool to every role', () => {
    expect(filter('owner')).toEqual(['read_file', 'list_files', 'write_file', 'exec']);
    expect(filter('admin')).toEqual(['read_file', 'list_files', 'write_file', 'exec']);
    expect(filter('member')).toEqual(['read_file', 'list_files', 'write_file']);
    expect(filter('guest')).toEqual(['read_file', 'list_files', 'write_file']);
  });

  it('without offers every tool is offered (the filter before offeredTo existed)', () => {
    expect(names(preFilter(tools, [], call('guest')))).toEqual(names(tools));
  });

  it('a switch at a role offers the tool to that role', () => {
    const memberSwitch: OfferScope = { tool: 'exec', scope: { kind: 'role', id: 'member' } };
    expect(filter('member', [memberSwitch])).toContain('exec');
    expect(filter('guest', [memberSwitch])).not.toContain('exec');
  });

  it('a switch at one principal offers it to that person only; another tool’s switch offers nothing', () => {
    const mine: OfferScope = { tool: 'exec', scope: { kind: 'principal', id: 'p1' } };
    expect(filter('member', [mine], [], 'p1')).toContain('exec');
    expect(filter('member', [mine], [], 'p2')).not.toContain('exec');
    expect(filter('member', [{ tool: 'write_file', scope: { kind: 'principal', id: 'p1' } }])).not.toContain('exec');
  });

  it('switches at the gateway, agent, channel, conversation and session scopes apply like rules do', () => {
    const at = (scope: OfferScope['scope']) => filter('guest', [{ tool: 'exec', scope }]);
    expect(at({ kind: 'gateway' })).toContain('exec');
    expect(at({ kind: 'agent', id: 'default' })).toContain('exec');
    expect(at({ kind: 'agent', id: 'other' })).not.toContain('exec');
    expect(at({ kind: 'channel', id: 'telegram:main' })).toContain('exec');
    expect(at({ kind: 'conversation', id: 'telegram:main:p1' })).toContain('exec');
    expect(at({ kind: 'conversation', id: 'telegram:main:p2' })).not.toContain('exec');
    expect(at({ kind: 'session', id: 's_p1' })).toContain('exec');
  });

  it('deny still wins: a content-less deny at any applicable scope hides a switched-on tool, even for the owner', () => {
    const on: OfferScope = { tool: 'exec', scope: { kind: 'principal', id: 'p1' } };
    expect(filter('member', [on], [rule('deny', 'exec', { kind: 'role', id: 'member' })])).not.toContain('exec');
    expect(filter('owner', [], [rule('deny', 'exec', { kind: 'role', id: 'owner' })])).not.toContain('exec');
    // A content deny leaves it offered (other commands may pass).
    expect(filter('member', [on], [rule('deny', 'exec(rm:*)')])).toContain('exec');
  });
});

describe('CapabilityRegistry.offeredTo', () => {
  it('capabilities.offeredTo overrides the built-in default per tool, and lists it', () => {
    const custom = new CapabilityRegistry({
      tools,
      mcpServers: [],
      channels: [],
      model: { name: 'm', baseUrl: '', apiKey: '' },
      hooks: {},
      offeredTo: new Map<string, Role[]>([
        ['write_file', ['owner']],
        ['exec', ['owner', 'admin', 'member']],
      ]),
    });
    expect(custom.offeredTo('write_file')).toEqual(['owner']);
    expect(custom.offeredTo('exec')).toEqual(['owner', 'admin', 'member']);
    expect(custom.offeredTo('read_file')).toEqual(['owner', 'admin', 'member', 'guest']);
    expect(custom.get('write_file')?.offeredTo).toEqual(['owner']);
    expect(registry.get('exec')?.offeredTo).toEqual(['owner', 'admin']);
    expect(custom.get('model:anthropic')?.offeredTo).toBeUndefined();
  });

  it('refuses a name that is neither registered nor reserved; accepts reserved names and tools of an MCP server that did not come up', () => {
    const build = (offeredTo: Map<string, Role[]>, mcpServers: string[] = []) =>
      new CapabilityRegistry({ tools, mcpServers, channels: [], model: { name: 'm', baseUrl: '', apiKey: '' }, hooks: {}, offeredTo });
    expect(() => build(new Map([['wirte_file', ['owner']]]))).toThrow(/capabilities\.offeredTo\.wirte_file: no tool named "wirte_file"/);
    expect(() => build(new Map([['__proto__', ['owner']]]))).toThrow(/capabilities\.offeredTo\.__proto__/);
    expect(build(new Map([['web_fetch', ['owner']]])).offeredTo('web_fetch')).toEqual(['owner']);
    expect(build(new Map([['mcp__down__search', ['owner']]]), ['down']).offeredTo('mcp__down__search')).toEqual(['owner']);
    expect(() => build(new Map([['mcp__down__search', ['owner']]]))).toThrow(/no tool named/);
  });

  it('the runtime group reserves exec only (process left the registry)', () => {
    const withProcess = new CapabilityRegistry({
      tools: [...tools, { ...exec, name: 'process' }],
      mcpServers: [],
      channels: [],
      model: { name: 'm', baseUrl: '', apiKey: '' },
      hooks: {},
    });
    expect(withProcess.groupMembers('group:runtime')).toEqual(['exec']);
    expect(names(withProcess.toolsFor('coding'))).not.toContain('process');
  });
});
