import { describe, expect, it } from 'vitest';
import type { Approval } from '@switchboard/core';
import { useBroker } from './broker-fixture.js';

const env = useBroker();

/** Asks for an approval of turn `turnId`; resolves `notified` with the stored approval once it is shown. */
function request(turnId: string, toolUseId: string) {
  let shown: (a: Approval) => void = () => {};
  const notified = new Promise<Approval>((resolve) => (shown = resolve));
  const done = env.broker.request({
    turnId,
    toolUseId,
    sessionId: 's1',
    agentId: 'default',
    channelId: 'websocket:default',
    tool: 'write_file',
    alwaysRule: 'write_file(a.txt)',
    summary: 'write_file a.txt',
    input: { path: 'a.txt' },
    source: 'rule',
    requesterPrincipalId: 'p1',
    conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
    signal: new AbortController().signal,
    notify: (a) => shown(a),
  });
  return { done, notified };
}

describe('ApprovalBroker.cancelTurn', () => {
  it('cancels the pending approvals of that turn only (audited), ends the wait, and a later decision is already_decided', async () => {
    const mine = request('t1', 'toolu_1');
    const other = request('t2', 'toolu_2');
    const a = await mine.notified;
    const b = await other.notified;
    expect(await env.broker.cancelTurn('t1', 'the turn was stopped')).toBe(1);
    expect(await mine.done).toMatchObject({ allowed: false, by: 'system', reason: 'the approval was cancelled: the turn was stopped' });
    expect(await env.storage.approvals.get(a.id)).toMatchObject({ status: 'cancelled', decidedBy: 'system', reason: 'the turn was stopped' });
    expect(await env.storage.approvals.get(b.id)).toMatchObject({ status: 'pending' });
    const audit = await env.storage.audit.list({ action: 'approval.cancelled' });
    expect(audit.map((e) => e.target)).toEqual([a.id]);

    const late = await env.broker.decide(a.id, 'deny', false, { kind: 'operator', tokenName: 'ops', scopes: ['approvals'] });
    expect(late).toMatchObject({ outcome: 'already_decided', approval: { status: 'cancelled' } });
    // A second cancel (a turn ended twice) changes nothing and audits nothing.
    expect(await env.broker.cancelTurn('t1', 'again')).toBe(0);
    expect(await env.storage.audit.list({ action: 'approval.cancelled' })).toHaveLength(1);
  });

  it('cancelEnded (start-up) cancels pending approvals of ended or unknown turns, and keeps those of open turns', async () => {
    const key = { agent: 'default', channel: 'websocket', account: 'default', scope: 'dm' as const, principalId: 'p1' };
    const message = (id: string) => ({
      dedupeKey: id,
      channel: 'websocket',
      account: 'default',
      conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' as const },
      sender: { identity: 'ws:tok', isBot: false },
      kind: 'dm' as const,
      mentioned: true,
      text: `hello ${id}`,
      receivedAt: new Date(),
    });
    const ended = await env.storage.turns.accept(message('m1'), { key, clientId: 'm1' });
    const open = await env.storage.turns.accept(message('m2'), { key, clientId: 'm2' });
    await env.storage.turns.setState(ended.turnId!, 'completed', { reason: 'completed' });
    await env.storage.turns.setState(open.turnId!, 'suspended', { reason: 'shutdown' });
    const base = {
      toolUseId: 'toolu_x',
      sessionId: 's1',
      tool: 'write_file',
      summary: 'w',
      input: {},
      requesterPrincipalId: 'p1',
      conversation: message('x').conversation,
      expiresAt: new Date(Date.now() + 60_000),
      source: 'rule' as const,
      alwaysRule: null,
    };
    const a = (await env.storage.approvals.create({ ...base, turnId: ended.turnId! })).approval;
    const b = (await env.storage.approvals.create({ ...base, turnId: open.turnId! })).approval;
    const c = (await env.storage.approvals.create({ ...base, turnId: 'no-such-turn' })).approval;
    expect(await env.broker.cancelEnded()).toBe(2);
    expect((await env.storage.approvals.get(a.id))?.status).toBe('cancelled');
    expect((await env.storage.approvals.get(b.id))?.status).toBe('pending');
    expect((await env.storage.approvals.get(c.id))?.status).toBe('cancelled');
  });

  it('an approval decided first is not cancelled', async () => {
    const r = request('t3', 'toolu_3');
    const a = await r.notified;
    expect(await env.broker.decide(a.id, 'allow', false, { kind: 'principal', principalId: 'p1', role: 'member' })).toMatchObject({ outcome: 'decided' });
    expect(await env.broker.cancelTurn('t3', 'the turn ended')).toBe(0);
    expect(await env.storage.approvals.get(a.id)).toMatchObject({ status: 'allowed' });
    expect(await r.done).toMatchObject({ allowed: true });
  });
});
