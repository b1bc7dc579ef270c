import { describe, expect, it } from 'vitest';
import { exec } from '../permissions/fixtures.js';
import { TOOLS, usePolicy } from './fixture.js';

// The turn policy's pre-filter with offeredTo defaults and stored offer-switches (read once and
// cached like the rule set; `invalidateRules()` drops both).

const env = usePolicy();
const names = (tools: { name: string }[]) => tools.map((t) => t.name);
const agentTools = [...TOOLS, exec];

describe('PolicyService: offeredTo and offer-switches', () => {
  it('offers exec to the owner, not to a member, until a switch at the member’s principal is stored and the cache dropped', async () => {
    const service = env.setup();
    const owner = await env.principal('owner');
    const member = await env.principal('member');
    expect(names((await env.turn({ principalId: owner, agentTools })).policy.tools)).toContain('exec');
    expect(names((await env.turn({ principalId: member, agentTools })).policy.tools)).not.toContain('exec');

    await env.storage.offerSwitches.put({ tool: 'exec', scopeKind: 'principal', scopeId: member, createdBy: 'operator:t' });
    // Cached: the switch counts once the cache is dropped, as the control API does after a change.
    expect(names((await env.turn({ principalId: member, agentTools })).policy.tools)).not.toContain('exec');
    service.invalidateRules();
    const offered = (await env.turn({ principalId: member, agentTools })).policy;
    expect(names(offered.tools)).toContain('exec');
    const other = await env.principal('member');
    expect(names((await env.turn({ principalId: other, agentTools })).policy.tools)).not.toContain('exec');

    // A deny rule at the role wins over the principal's switch.
    await env.storage.rules.create({ scopeKind: 'role', scopeId: 'member', behavior: 'deny', rule: 'exec', createdBy: 'operator:t' });
    service.invalidateRules();
    expect(names((await env.turn({ principalId: member, agentTools })).policy.tools)).not.toContain('exec');
  });

  it('a room sender without a principal is a guest: capabilities.offeredTo can withhold a tool from guests alone', async () => {
    env.setup({ offeredTo: new Map([['mcp__mail__send', ['owner', 'admin', 'member']]]) });
    const member = await env.principal('member');
    expect(names((await env.turn({ principalId: member })).policy.tools)).toContain('mcp__mail__send');
    const guest = await env.principal('guest');
    expect(names((await env.turn({ principalId: guest })).policy.tools)).not.toContain('mcp__mail__send');
    expect(names((await env.turn({ room: 'r1' })).policy.tools)).not.toContain('mcp__mail__send');
  });
});

describe('PolicyService: the switch cache', () => {
  it('a read that started before invalidateRules is not cached: the next turn sees the change', async () => {
    const service = env.setup();
    const member = await env.principal('member');
    const storage = env.storage;
    const list = storage.offerSwitches.list.bind(storage.offerSwitches);
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: (() => void) | undefined;
    const reading = new Promise<void>((resolve) => {
      entered = resolve;
    });
    // The first read returns the (empty) list only after a switch was stored and the cache dropped.
    storage.offerSwitches.list = async () => {
      const before = await list();
      storage.offerSwitches.list = list;
      entered?.();
      await gate;
      return before;
    };
    const racing = env.turn({ principalId: member, agentTools });
    await reading;
    await storage.offerSwitches.put({ tool: 'exec', scopeKind: 'principal', scopeId: member, createdBy: 'operator:t' });
    service.invalidateRules();
    release?.();
    expect(names((await racing).policy.tools)).not.toContain('exec');
    expect(names((await env.turn({ principalId: member, agentTools })).policy.tools)).toContain('exec');
  });
});
