import { describe, expect, it } from 'vitest';
import type { Approval } from '@switchboard/core';
import type { AskSource } from '@switchboard/agent';
import { useBroker } from './broker-fixture.js';

const env = useBroker();

/** Requests an approval from `source` with an allow-everything automatic responder; returns the stored approval and whether the responder was asked. */
async function request(source: AskSource, id: string) {
  const ac = new AbortController();
  let shown: (a: Approval) => void = () => {};
  const notified = new Promise<Approval>((resolve) => (shown = resolve));
  let consulted = false;
  const done = env.broker.request({
    turnId: 't1',
    toolUseId: id,
    sessionId: 's1',
    agentId: 'default',
    channelId: 'websocket:default',
    tool: 'write_file',
    alwaysRule: 'write_file(literal:**)',
    summary: 'write_file **',
    input: { path: '**' },
    source,
    requesterPrincipalId: 'p1',
    conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
    signal: ac.signal,
    notify: (a) => shown(a),
    autoResponder: async () => {
      consulted = true;
      return { decision: 'allow', name: 'PermissionRequest' };
    },
  });
  return { done, notified, consulted: () => consulted };
}

describe('ApprovalBroker: automatic responders answer only mode asks', () => {
  it('consults the automatic responder for a mode ask', async () => {
    const r = await request('mode', 'toolu_m');
    expect(await r.done).toMatchObject({ allowed: true, by: 'hook:PermissionRequest' });
    expect(r.consulted()).toBe(true);
  });

  it.each<AskSource>(['rule', 'safety', 'hook', 'sandbox'])('never consults it for a %s ask, and refuses a hook decision on it', async (source) => {
    const r = await request(source, `toolu_${source}`);
    const a = await r.notified;
    expect(a.source).toBe(source);
    expect(r.consulted()).toBe(false);
    expect(await env.broker.decide(a.id, 'allow', false, { kind: 'hook', name: 'PermissionRequest' })).toMatchObject({ outcome: 'forbidden' });
    expect(await env.broker.decide(a.id, 'allow', true, { kind: 'principal', principalId: 'p1', role: 'member' })).toMatchObject({ outcome: 'decided' });
    expect(await r.done).toMatchObject({ allowed: true, by: 'principal:p1' });
    expect((await env.storage.rules.list()).map((x) => x.rule)).toEqual(['write_file(literal:**)']);
  });
});
