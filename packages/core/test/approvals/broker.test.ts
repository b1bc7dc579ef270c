import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Approval, ApprovalBroker, type ApprovalBrokerOptions, type ApprovalRequest, type Approver, type StoredRule } from '../../src/index.js';

let storage: SqliteStorage;
let broker: ApprovalBroker;
let saved: StoredRule[];

/** A broker over a fresh `:memory:` store; `options` override the defaults (60 s timeout, everyone but guests self-approves). */
function makeBroker(options: Partial<ApprovalBrokerOptions> = {}): ApprovalBroker {
  broker?.close();
  broker = new ApprovalBroker({
    storage,
    log: pino({ level: 'silent' }),
    timeoutMs: 60_000,
    selfApproveRoles: ['owner', 'admin', 'member'],
    onRuleSaved: (rule) => void saved.push(rule),
    ...options,
  });
  return broker;
}

beforeEach(() => {
  storage = openSqliteStorage({ file: ':memory:' });
  saved = [];
  makeBroker();
});
afterEach(() => {
  broker.close();
  storage.close();
});

/** Asks for an approval; `shown` resolves with the approval the requester's chat was shown. */
function ask(overrides: Partial<ApprovalRequest> = {}) {
  let show: (a: Approval) => void = () => {};
  const shown = new Promise<Approval>((resolve) => (show = resolve));
  const controller = new AbortController();
  const done = broker.request({
    turnId: 't1',
    toolUseId: 'toolu_1',
    sessionId: 's1',
    agentId: 'default',
    channelId: 'websocket:default',
    tool: 'write_file',
    alwaysRule: 'write_file(literal:a.txt)',
    summary: 'write_file a.txt',
    input: { path: 'a.txt' },
    source: 'mode',
    requesterPrincipalId: 'p1',
    conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
    signal: controller.signal,
    notify: (a) => show(a),
    ...overrides,
  });
  return { done, shown, controller };
}

const member = (principalId = 'p1'): Approver => ({ kind: 'principal', principalId, role: 'member' });
const admin: Approver = { kind: 'principal', principalId: 'p9', role: 'admin' };
const actions = async () => (await storage.audit.list({})).map((e) => e.action).sort();

describe('ApprovalBroker.request', () => {
  it('creates a pending approval, shows it, and returns the decision with the approval it created', async () => {
    const r = ask();
    const shown = await r.shown;
    expect(shown).toMatchObject({ status: 'pending', tool: 'write_file', requesterPrincipalId: 'p1', source: 'mode' });
    expect(shown.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(await storage.approvals.get(shown.id)).toMatchObject({ status: 'pending' });
    expect(await broker.decide(shown.id, 'allow', false, member())).toMatchObject({ outcome: 'decided', approval: { id: shown.id, status: 'allowed' } });
    const outcome = await r.done;
    expect(outcome).toMatchObject({ allowed: true, by: 'principal:p1', approval: { id: shown.id, status: 'allowed', decidedBy: 'principal:p1' } });
    expect(await actions()).toEqual(['approval.decided', 'approval.requested']);
    expect(saved).toEqual([]);
  });

  it('a denial carries its reason; the approval is denied', async () => {
    const r = ask();
    const shown = await r.shown;
    await broker.decide(shown.id, 'deny', false, member(), 'not that file');
    expect(await r.done).toMatchObject({ allowed: false, by: 'principal:p1', reason: 'not that file', approval: { id: shown.id, status: 'denied' } });
  });

  it('a resumed turn finds its approval (no second request audited) and an already decided one answers at once', async () => {
    const first = ask();
    const again = ask();
    const a = await first.shown;
    expect((await again.shown).id).toBe(a.id);
    await broker.decide(a.id, 'allow', false, member());
    expect((await first.done).approval.id).toBe(a.id);
    expect((await again.done).approval.id).toBe(a.id);
    expect((await storage.audit.list({ action: 'approval.requested' })).length).toBe(1);
    // Asked once more after the decision: no wait, the recorded decision.
    let showed = false;
    const late = await ask({ notify: () => void (showed = true) }).done;
    expect(late).toMatchObject({ allowed: true, by: 'principal:p1', approval: { id: a.id, status: 'allowed' } });
    expect(showed).toBe(false);
  });

  it("the turn's signal ends the wait with a system denial; the approval stays pending for cancelTurn", async () => {
    const r = ask();
    const shown = await r.shown;
    r.controller.abort();
    expect(await r.done).toMatchObject({ allowed: false, by: 'system', reason: 'the turn was stopped', approval: { id: shown.id, status: 'pending' } });
    expect(await broker.cancelTurn('t1', 'the turn was stopped')).toBe(1);
    expect(await storage.approvals.get(shown.id)).toMatchObject({ status: 'cancelled' });
  });

  it('cancelTurn ends the wait as a cancellation, audited; a later decision is already_decided', async () => {
    const r = ask();
    const shown = await r.shown;
    expect(await broker.cancelTurn('t1', 'the turn failed')).toBe(1);
    expect(await r.done).toMatchObject({
      allowed: false,
      by: 'system',
      reason: 'the approval was cancelled: the turn failed',
      approval: { status: 'cancelled' },
    });
    expect(await broker.decide(shown.id, 'allow', false, member())).toMatchObject({ outcome: 'already_decided', approval: { status: 'cancelled' } });
    expect(await actions()).toEqual(['approval.cancelled', 'approval.requested']);
  });

  it('expires into a denial after the configured timeout (the wait ends on the expiry, audited)', async () => {
    makeBroker({ timeoutMs: 200 });
    const r = ask();
    const shown = await r.shown;
    const outcome = await r.done;
    expect(outcome).toMatchObject({
      allowed: false,
      by: 'system',
      reason: 'nobody answered the approval in time',
      approval: { id: shown.id, status: 'expired' },
    });
    expect(await storage.approvals.get(shown.id)).toMatchObject({ status: 'expired', decidedBy: 'system' });
    expect(await actions()).toEqual(['approval.expired', 'approval.requested']);
    expect(await broker.decide(shown.id, 'allow', false, member())).toMatchObject({ outcome: 'already_decided' });
  });
});

describe('ApprovalBroker.decide: who may answer', () => {
  it('the requester may answer when their role self-approves; owners and admins answer anyone', async () => {
    const r = ask();
    const shown = await r.shown;
    expect(broker.mayDecide(shown, member())).toEqual({ ok: true });
    expect(broker.mayDecide(shown, admin)).toEqual({ ok: true });
    expect(broker.mayDecide(shown, { kind: 'principal', principalId: 'p8', role: 'owner' })).toEqual({ ok: true });
  });

  it('a role outside selfApproveRoles may not answer its own request; another member may not answer at all', async () => {
    makeBroker({ selfApproveRoles: ['owner', 'admin'] });
    const r = ask();
    const shown = await r.shown;
    expect(await broker.decide(shown.id, 'allow', false, member())).toEqual({ outcome: 'forbidden', reason: 'your role (member) may not approve tool calls' });
    expect(await broker.decide(shown.id, 'allow', false, member('p2'))).toEqual({
      outcome: 'forbidden',
      reason: 'only the requester or an admin may answer this approval',
    });
    expect(await storage.approvals.get(shown.id)).toMatchObject({ status: 'pending' });
    expect(await broker.decide(shown.id, 'deny', false, admin)).toMatchObject({ outcome: 'decided' });
    expect(await r.done).toMatchObject({ allowed: false, by: 'principal:p9' });
  });

  it('operators need the approvals (or admin) scope; hooks may answer only mode asks', async () => {
    const r = ask({ source: 'rule' });
    const shown = await r.shown;
    expect(await broker.decide(shown.id, 'allow', false, { kind: 'operator', tokenName: 'ro', scopes: ['read'] })).toEqual({
      outcome: 'forbidden',
      reason: 'this operator token lacks the "approvals" scope',
    });
    expect(await broker.decide(shown.id, 'allow', false, { kind: 'hook', name: 'PermissionRequest' })).toMatchObject({ outcome: 'forbidden' });
    expect(await broker.decide(shown.id, 'allow', false, { kind: 'operator', tokenName: 'ops', scopes: ['approvals'] })).toMatchObject({ outcome: 'decided' });
    expect(await r.done).toMatchObject({ allowed: true, by: 'operator:ops' });
  });

  it('an unknown id is not_found', async () => {
    expect(await broker.decide('nope', 'allow', false, admin)).toEqual({ outcome: 'not_found' });
  });
});

describe('ApprovalBroker.decide: "always allow"', () => {
  it.each<[string, Approver, string | null, StoredRule['scopeKind'], string | null]>([
    ['the requester: their principal', member(), 'p1', 'principal', 'p1'],
    ["an admin answering someone else's: the conversation", admin, 'p1', 'conversation', 'websocket:default:p1'],
    ['an admin operator: the agent', { kind: 'operator', tokenName: 'root', scopes: ['admin'] }, 'p1', 'agent', 'default'],
    [
      'an approvals operator on a request without a principal: the session',
      { kind: 'operator', tokenName: 'ops', scopes: ['approvals'] },
      null,
      'session',
      's1',
    ],
  ])('saves the exact rule no wider than the approver (%s)', async (_what, who, requester, scopeKind, scopeId) => {
    const r = ask({ requesterPrincipalId: requester });
    const shown = await r.shown;
    expect(await broker.decide(shown.id, 'allow', true, who)).toMatchObject({ outcome: 'decided', approval: { status: 'allowed' } });
    expect(await r.done).toMatchObject({ allowed: true });
    const rules = await storage.rules.list();
    expect(rules).toEqual([expect.objectContaining({ scopeKind, scopeId, behavior: 'allow', rule: 'write_file(literal:a.txt)' })]);
    expect(saved.map((s) => s.id)).toEqual([rules[0]?.id]);
    expect(await actions()).toEqual(['approval.decided', 'approval.requested', 'rule.created']);
  });

  it('saves every rule of a stored list (one per part of an exec call), and none for an empty list', async () => {
    const r = ask({ tool: 'exec', alwaysRule: '["exec(npm test)","exec(git status)"]' });
    await broker.decide((await r.shown).id, 'allow', true, member());
    expect(await r.done).toMatchObject({ allowed: true });
    expect((await storage.rules.list()).map((rule) => [rule.scopeKind, rule.rule]).sort()).toEqual([
      ['principal', 'exec(git status)'],
      ['principal', 'exec(npm test)'],
    ]);
    expect(saved).toHaveLength(2);
    const none = ask({ tool: 'exec', turnId: 't2', toolUseId: 'toolu_2', alwaysRule: '[]' });
    await broker.decide((await none.shown).id, 'allow', true, member());
    expect(await none.done).toMatchObject({ allowed: true });
    expect(await storage.rules.list()).toHaveLength(2);
    expect(await actions()).toContain('rule.not_saved');
  });

  it('always with deny saves nothing', async () => {
    const r = ask();
    await broker.decide((await r.shown).id, 'deny', true, member());
    expect(await r.done).toMatchObject({ allowed: false });
    expect(await storage.rules.list()).toEqual([]);
  });
});

describe('ApprovalBroker: races', () => {
  it('of concurrent decisions exactly one is decided; the waiter gets that one', async () => {
    for (let i = 0; i < 5; i++) {
      const r = ask({ turnId: `t${i}`, toolUseId: `toolu_${i}` });
      const shown = await r.shown;
      const outcomes = await Promise.all([
        broker.decide(shown.id, 'allow', true, member()),
        broker.decide(shown.id, 'deny', false, admin),
        broker.decide(shown.id, 'deny', false, { kind: 'operator', tokenName: 'ops', scopes: ['approvals'] }),
      ]);
      const winners = outcomes.filter((o) => o.outcome === 'decided');
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((o) => o.outcome === 'already_decided')).toHaveLength(2);
      const winner = winners[0]!;
      const done = await r.done;
      if (winner.outcome !== 'decided') throw new Error('unreachable');
      expect(done.by).toBe(winner.approval.decidedBy);
      expect(done.allowed).toBe(winner.approval.status === 'allowed');
    }
    expect((await storage.audit.list({ action: 'approval.decided' })).length).toBe(5);
  });

  it('a decision racing cancelTurn: exactly one of them records the outcome', async () => {
    const r = ask();
    const shown = await r.shown;
    const [decided, cancelled] = await Promise.all([broker.decide(shown.id, 'allow', false, member()), broker.cancelTurn('t1', 'stopped')]);
    expect((decided.outcome === 'decided' ? 1 : 0) + cancelled).toBe(1);
    const after = await storage.approvals.get(shown.id);
    expect(after?.status).toBe(decided.outcome === 'decided' ? 'allowed' : 'cancelled');
    expect((await r.done).approval.status).toBe(after?.status);
  });
});

describe('ApprovalBroker onDecided (metrics)', () => {
  it('is told once per approval, with how it ended, only by the claim that won; a throwing observer changes nothing', async () => {
    const told: string[] = [];
    makeBroker({ timeoutMs: 200, onDecided: (status) => void told.push(status) });
    // Raced decisions: one winner, one call.
    const raced = ask({ turnId: 'ta', toolUseId: 'toolu_a' });
    const a = await raced.shown;
    await Promise.all([broker.decide(a.id, 'allow', false, member()), broker.decide(a.id, 'deny', false, admin)]);
    await raced.done;
    // A cancellation, then a decision that comes too late.
    const cancelled = ask({ turnId: 'tb', toolUseId: 'toolu_b' });
    const b = await cancelled.shown;
    expect(await broker.cancelTurn('tb', 'stopped')).toBe(1);
    expect(await broker.decide(b.id, 'allow', false, member())).toMatchObject({ outcome: 'already_decided' });
    // An expiry.
    await ask({ turnId: 'tc', toolUseId: 'toolu_c' }).done;
    expect(told).toHaveLength(3);
    expect(['allowed', 'denied']).toContain(told[0]);
    expect(told.slice(1)).toEqual(['cancelled', 'expired']);

    makeBroker({
      onDecided: () => {
        throw new Error('observer failed');
      },
    });
    const thrown = ask({ turnId: 'td', toolUseId: 'toolu_d' });
    const d = await thrown.shown;
    expect(await broker.decide(d.id, 'deny', false, member())).toMatchObject({ outcome: 'decided', approval: { status: 'denied' } });
    expect(await thrown.done).toMatchObject({ allowed: false });
  });
});
