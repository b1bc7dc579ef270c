import type { NewApproval } from '@switchboard/core';
import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

const approval = (over: Partial<NewApproval> = {}): NewApproval => ({
  turnId: 't1',
  toolUseId: 'toolu_1',
  sessionId: 's1',
  tool: 'write_file',
  summary: 'write_file notes/a.md (12 bytes)',
  input: { path: 'notes/a.md', content: 'hello' },
  requesterPrincipalId: 'p1',
  conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
  expiresAt: new Date(Date.now() + 60_000),
  source: 'rule',
  alwaysRule: 'write_file(notes/a.md)',
  ...over,
});

/** Approvals, stored rules and the audit log. */
export function governanceContract(store: StorageRef): void {
  it('creates one approval per (turn, tool_use) and returns the existing one on a second create', async () => {
    const s = store();
    const a = await s.approvals.create(approval());
    expect(a.existed).toBe(false);
    expect(a.approval).toMatchObject({ status: 'pending', decidedBy: null, always: false, tool: 'write_file', source: 'rule' });
    expect(a.approval.input).toEqual({ path: 'notes/a.md', content: 'hello' });
    const again = await s.approvals.create(approval({ summary: 'different' }));
    expect(again).toMatchObject({ existed: true, approval: { id: a.approval.id, summary: 'write_file notes/a.md (12 bytes)' } });
    expect(await s.approvals.get(a.approval.id)).toEqual(a.approval);
    expect(await s.approvals.get('missing')).toBeNull();
  });

  it('claim decides a pending approval exactly once', async () => {
    const s = store();
    const { approval: a } = await s.approvals.create(approval());
    expect(await s.approvals.claim(a.id, 'allowed', 'principal:p1', { always: true })).toBe(true);
    expect(await s.approvals.claim(a.id, 'denied', 'operator:ops')).toBe(false);
    expect(await s.approvals.claim(a.id, 'expired', 'system')).toBe(false);
    expect(await s.approvals.get(a.id)).toMatchObject({ status: 'allowed', decidedBy: 'principal:p1', always: true });
    expect(await s.approvals.claim('missing', 'allowed', 'x')).toBe(false);
  });

  it('lists approvals by status, session and requester', async () => {
    const s = store();
    const a = (await s.approvals.create(approval())).approval;
    await s.approvals.create(approval({ toolUseId: 'toolu_2', sessionId: 's2', requesterPrincipalId: 'p2' }));
    await s.approvals.claim(a.id, 'denied', 'principal:p1');
    expect((await s.approvals.list({ status: 'pending' })).map((x) => x.toolUseId)).toEqual(['toolu_2']);
    expect((await s.approvals.list({ principalId: 'p1' })).map((x) => x.status)).toEqual(['denied']);
    expect(await s.approvals.list({ sessionId: 's2' })).toHaveLength(1);
    expect(await s.approvals.list({ limit: 1 })).toHaveLength(1);
  });

  it('lists approvals by turn, and a cancelled approval is claimed once like a decision', async () => {
    const s = store();
    const a = (await s.approvals.create(approval())).approval;
    await s.approvals.create(approval({ turnId: 't2', toolUseId: 'toolu_9' }));
    expect((await s.approvals.list({ turnId: 't1', status: 'pending' })).map((x) => x.id)).toEqual([a.id]);
    expect(await s.approvals.claim(a.id, 'cancelled', 'system', { reason: 'the turn was stopped' })).toBe(true);
    expect(await s.approvals.claim(a.id, 'denied', 'operator:ops')).toBe(false);
    expect(await s.approvals.get(a.id)).toMatchObject({ status: 'cancelled', decidedBy: 'system', reason: 'the turn was stopped' });
    expect((await s.approvals.list({ status: 'cancelled' })).map((x) => x.id)).toEqual([a.id]);
    expect(await s.approvals.list({ turnId: 't1', status: 'pending' })).toEqual([]);
  });

  it("lists one turn's approvals newest first, with the same filters, limit and offset as every list", async () => {
    const s = store();
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4]) ids.push((await s.approvals.create(approval({ toolUseId: `toolu_${n}`, sessionId: n === 4 ? 's2' : 's1' }))).approval.id);
    await s.approvals.create(approval({ turnId: 't2', toolUseId: 'toolu_1' }));
    await s.approvals.claim(ids[1]!, 'denied', 'principal:p1');
    const all = await s.approvals.list();
    const ofT1 = all.filter((x) => x.turnId === 't1').map((x) => x.id);
    expect(ofT1).toHaveLength(4);
    expect((await s.approvals.list({ turnId: 't1' })).map((x) => x.id)).toEqual(ofT1);
    expect((await s.approvals.list({ turnId: 't1', limit: 2, offset: 1 })).map((x) => x.id)).toEqual(ofT1.slice(1, 3));
    expect((await s.approvals.list({ turnId: 't1', status: 'pending', sessionId: 's1' })).map((x) => x.id)).toEqual(
      ofT1.filter((id) => id !== ids[1] && id !== ids[3]),
    );
    expect(await s.approvals.list({ turnId: 't1', principalId: 'p2' })).toEqual([]);
    expect(await s.approvals.list({ turnId: 'none' })).toEqual([]);
  });

  it('stores, lists and deletes rules', async () => {
    const s = store();
    const r = await s.rules.create({ scopeKind: 'principal', scopeId: 'p1', behavior: 'allow', rule: 'write_file(notes/**)', createdBy: 'principal:p1' });
    expect(await s.rules.list()).toEqual([r]);
    expect(await s.rules.delete(r.id)).toBe(true);
    expect(await s.rules.delete(r.id)).toBe(false);
    expect(await s.rules.list()).toEqual([]);
  });

  it('appends audit entries and lists them newest first with filters', async () => {
    const s = store();
    await s.audit.append({ actor: 'operator:ops', action: 'policy.update', target: 'websocket:default', detail: { dmPolicy: 'disabled' } });
    await s.audit.append({ actor: 'gateway', action: 'permission.decision', detail: { tool: 'write_file' } });
    const all = await s.audit.list();
    expect(all.map((e) => e.action)).toEqual(['permission.decision', 'policy.update']);
    expect(all[1]).toMatchObject({ actor: 'operator:ops', target: 'websocket:default', detail: { dmPolicy: 'disabled' } });
    expect(await s.audit.list({ action: 'policy.update' })).toHaveLength(1);
    expect(await s.audit.list({ actor: 'gateway' })).toHaveLength(1);
    expect(await s.audit.list({ since: new Date(Date.now() + 60_000) })).toHaveLength(0);
  });

  it('reads a negative limit as none and a negative offset as 0, and an id no entry can have as no entry', async () => {
    const s = store();
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await s.audit.append({ actor: 'gateway', action: `a${n}` }));
    expect((await s.audit.list({ limit: -1, offset: -5 })).map((e) => e.action)).toEqual(['a3', 'a2', 'a1']);
    for (const n of [1, 2, 3]) await s.approvals.create(approval({ toolUseId: `toolu_${n}` }));
    expect(await s.approvals.list({ limit: -1, offset: -1 })).toHaveLength(3);
    expect(await s.approvals.list({ turnId: 't1', limit: 2, offset: -1 })).toHaveLength(2);
    expect(await s.approvals.list({ turnId: 't1', limit: -1 })).toHaveLength(3);
    expect(await s.audit.updateDetail(ids[0]! + 0.5, { x: 1 })).toBe(false);
    expect(await s.audit.updateDetail(Number.MAX_SAFE_INTEGER * 4, { x: 1 })).toBe(false);
    expect(await s.audit.updateDetail(Number.NaN, { x: 1 })).toBe(false);
    expect((await s.audit.list({ action: 'a1' }))[0]?.detail).toEqual({});
  });
}
