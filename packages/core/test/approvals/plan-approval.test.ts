import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Approval,
  ApprovalBroker,
  type ApprovalRequest,
  type Approver,
  mayAnswerAutomatically,
  offersAlways,
  planChoiceLabel,
  planExitChoices,
} from '../../src/index.js';

let storage: SqliteStorage;
let broker: ApprovalBroker;

beforeEach(() => {
  storage = openSqliteStorage({ file: ':memory:' });
  broker = new ApprovalBroker({ storage, log: pino({ level: 'silent' }), timeoutMs: 60_000, selfApproveRoles: ['owner', 'admin', 'member'] });
});
afterEach(() => {
  broker.close();
  storage.close();
});

/** A plan approval (source `plan`, choices default and acceptEdits) with an eager automatic responder. */
function askPlan(overrides: Partial<ApprovalRequest> = {}) {
  let show: (a: Approval) => void = () => {};
  const shown = new Promise<Approval>((resolve) => (show = resolve));
  let consulted = 0;
  const done = broker.request({
    turnId: 't1',
    toolUseId: 'toolu_plan',
    sessionId: 's1',
    agentId: 'default',
    channelId: 'websocket:default',
    tool: 'exit_plan_mode',
    alwaysRule: '[]',
    summary: 'Proceed with this plan?\n\n1. do it',
    input: { plan: '1. do it' },
    source: 'plan',
    choices: ['default', 'acceptEdits'],
    requesterPrincipalId: 'p1',
    conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
    signal: new AbortController().signal,
    notify: (a) => show(a),
    autoResponder: async () => {
      consulted++;
      return { decision: 'allow', name: 'PermissionRequest' };
    },
    ...overrides,
  });
  return { done, shown, consulted: () => consulted };
}

const member: Approver = { kind: 'principal', principalId: 'p1', role: 'member' };
const operator: Approver = { kind: 'operator', tokenName: 'ops', scopes: ['admin'] };

describe('plan approvals in the broker', () => {
  it('stores the choices; an allow without a choice takes the first (least trusted); the outcome carries it', async () => {
    const r = askPlan();
    const a = await r.shown;
    expect(a).toMatchObject({ source: 'plan', choices: ['default', 'acceptEdits'], choice: null });
    expect(await broker.decide(a.id, 'allow', false, member)).toMatchObject({ outcome: 'decided', approval: { choice: 'default' } });
    expect(await r.done).toMatchObject({ allowed: true, choice: 'default' });
  });

  it('an allow may choose another offered mode; the audit records the choice', async () => {
    const r = askPlan();
    const a = await r.shown;
    expect(await broker.decide(a.id, 'allow', false, member, undefined, 'acceptEdits')).toMatchObject({ outcome: 'decided' });
    expect(await r.done).toMatchObject({ allowed: true, choice: 'acceptEdits' });
    const decided = (await storage.audit.list({ action: 'approval.decided' }))[0];
    expect(decided?.detail).toMatchObject({ decision: 'allow', choice: 'acceptEdits' });
  });

  it('refuses, without claiming: always allow, a mode it does not offer, a choice with a deny', async () => {
    const r = askPlan();
    const a = await r.shown;
    expect(await broker.decide(a.id, 'allow', true, operator)).toEqual({
      outcome: 'invalid',
      reason: 'this approval cannot be always allowed: it is a one-off decision, never saved as a rule',
    });
    expect(await broker.decide(a.id, 'allow', false, member, undefined, 'bypassPermissions')).toEqual({
      outcome: 'invalid',
      reason: 'choose one of: default, acceptEdits',
    });
    expect(await broker.decide(a.id, 'deny', false, member, undefined, 'default')).toMatchObject({ outcome: 'invalid' });
    expect((await storage.approvals.get(a.id))?.status).toBe('pending');
    expect(await storage.rules.list()).toEqual([]);
    expect(await broker.decide(a.id, 'deny', false, member, 'not yet')).toMatchObject({ outcome: 'decided' });
    expect(await r.done).toMatchObject({ allowed: false, reason: 'not yet' });
  });

  it('no automatic responder answers it: the responder is never consulted, and a hook approver is forbidden', async () => {
    const r = askPlan();
    const a = await r.shown;
    expect(r.consulted()).toBe(0);
    expect(await broker.decide(a.id, 'allow', false, { kind: 'hook', name: 'PermissionRequest' })).toMatchObject({ outcome: 'forbidden' });
    expect(mayAnswerAutomatically('plan')).toBe(false);
    expect((await storage.approvals.get(a.id))?.status).toBe('pending');
  });

  it('an ordinary approval takes no choice', async () => {
    const r = askPlan({ source: 'mode', choices: undefined, tool: 'write_file', toolUseId: 'toolu_w', autoResponder: undefined });
    const a = await r.shown;
    expect(a.choices).toBeNull();
    expect(await broker.decide(a.id, 'allow', false, member, undefined, 'default')).toEqual({ outcome: 'invalid', reason: 'this approval offers no choices' });
    expect(await broker.decide(a.id, 'allow', false, member)).toMatchObject({ outcome: 'decided', approval: { choice: null } });
  });
});

describe('plan choices', () => {
  it('offers default and acceptEdits, each capped by the broader scopes and the role, least trusted first', () => {
    expect(planExitChoices('bypassPermissions')).toEqual(['default', 'acceptEdits']);
    expect(planExitChoices('acceptEdits')).toEqual(['default', 'acceptEdits']);
    // A guest (ceiling default), or a conversation at default: default only.
    expect(planExitChoices('default')).toEqual(['default']);
    expect(planExitChoices('dontAsk')).toEqual(['dontAsk']);
  });

  it('labels, and no "always allow" for plans', () => {
    expect(planChoiceLabel('default')).toBe('Proceed (ask before edits)');
    expect(planChoiceLabel('acceptEdits')).toBe('Proceed (accept edits)');
    expect(planChoiceLabel('dontAsk')).toBe('Proceed (dontAsk mode)');
    expect(offersAlways('plan')).toBe(false);
    expect(offersAlways('mode')).toBe(true);
    expect(offersAlways(undefined)).toBe(true);
  });
});
