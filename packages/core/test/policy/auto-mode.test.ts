import type { ModelClient, ModelRequest, ModelResponse } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { AUTO_CLASSIFIER_MARKER, type Session, type TurnPolicyContext, TurnAutoMode } from '../../src/index.js';
import { exec, sendMail } from '../permissions/fixtures.js';
import { baseSettings, usePolicy } from './fixture.js';

const env = usePolicy();

/** A classifier model that answers every request with `answer` and records what it was sent. */
function classifier(answer: { decision: string; reason: string }): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    // biome-ignore lint/correctness/useYield: answers without streaming deltas
    async *stream(req): AsyncGenerator<never, ModelResponse, void> {
      requests.push(req);
      return {
        message: { role: 'assistant', content: [{ type: 'text', text: JSON.stringify(answer) }] },
        stopReason: 'end_turn',
        usage: { inputTokens: 12, outputTokens: 6, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
        model: req.model,
      };
    },
  };
}

/** An admin in an agent set to auto (the admin ceiling is auto). */
function autoSettings(ask: string[] = []) {
  return baseSettings({
    rules: { allow: [], ask, deny: [] },
    agents: new Map([['default', { mode: 'auto' as const, rules: { allow: [], ask: [], deny: [] } }]]),
    roleCeilings: { owner: 'bypassPermissions', admin: 'auto', member: 'acceptEdits', guest: 'default' },
  });
}

describe('PolicyService: auto mode', () => {
  it('blocks are denials of kind mode; at the limit the session is handed back, the turn goes on, and later mode asks go to people', async () => {
    const model = classifier({ decision: 'block', reason: 'not asked for' });
    env.setup({ settings: autoSettings(), model });
    const admin = await env.principal('admin');
    const turn = await env.turn({ principalId: admin, text: 'write the summary' });
    const recorded: string[] = [];
    turn.ctx.recordCall = (_usage, m) => recorded.push(m);
    for (let i = 0; i < 3; i++) {
      const d = await turn.policy.canUseTool(sendMail, { to: `x${i}@example.com` }, turn.toolCtx(`toolu_${i}`));
      expect(d).toMatchObject({ behavior: 'deny', kind: 'mode', reason: expect.stringContaining('not asked for') });
    }
    // Fast and reasoning stage for each call; each one is a usage row of the turn.
    expect(model.requests).toHaveLength(6);
    expect(recorded).toHaveLength(6);
    expect((model.requests[0]!.system[0] as { text: string }).text.startsWith(AUTO_CLASSIFIER_MARKER)).toBe(true);
    expect(turn.policy.shouldStop?.()).toBeNull();
    const session = await env.storage.sessions.get(turn.ctx.session.id);
    expect(session?.settings.autoHandback).toMatchObject({ at: expect.any(Number), reason: '3 tool calls in a row were denied' });

    // The next mode ask goes to a person; the classifier is not called.
    const asked = turn.next('approval_requested');
    const pending = turn.policy.canUseTool(sendMail, { to: 'y@example.com' }, turn.toolCtx('toolu_after'));
    expect(await asked).toMatchObject({ source: 'mode' });
    expect(model.requests).toHaveLength(6);
    const [approval] = await env.storage.approvals.list({ status: 'pending' });
    await env.broker.decide(approval!.id, 'deny', false, { kind: 'operator', tokenName: 'op', scopes: ['approvals'] });
    expect(await pending).toMatchObject({ behavior: 'deny' });
  });

  it('an ask rule goes to a person; the classifier only ever answers the mode’s ask', async () => {
    const model = classifier({ decision: 'allow', reason: 'fine' });
    env.setup({ settings: autoSettings(['exec(make deploy)']), model });
    const turn = await env.turn({ principalId: await env.principal('admin') });
    const asked = turn.next('approval_requested');
    const pending = turn.policy.canUseTool(exec, { command: 'make deploy' }, turn.toolCtx('toolu_rule'));
    expect(await asked).toMatchObject({ source: 'rule' });
    expect(model.requests).toHaveLength(0);
    const [approval] = await env.storage.approvals.list({ status: 'pending' });
    await env.broker.decide(approval!.id, 'deny', false, { kind: 'operator', tokenName: 'op', scopes: ['approvals'] });
    await pending;
    // The mode's own ask: the classifier allows it, and the allow is an exact session grant.
    expect(await turn.policy.canUseTool(exec, { command: 'make test' }, turn.toolCtx('toolu_mode'))).toEqual({ behavior: 'allow' });
    expect(model.requests).toHaveLength(1);
    expect(await env.storage.rules.list()).toEqual([
      expect.objectContaining({ scopeKind: 'session', behavior: 'allow', rule: 'exec(make test)', createdBy: 'classifier' }),
    ]);
    // A tool without rule content grants nothing wider than the call: no rule, the next call is classified again.
    expect(await turn.policy.canUseTool(sendMail, { to: 'team@example.com' }, turn.toolCtx('toolu_mail'))).toEqual({ behavior: 'allow' });
    expect(await env.storage.rules.list()).toHaveLength(1);
  });

  it('a subagent whose type lowers the mode below auto never reaches the classifier: its mode ask goes to a person; one at auto is classified', async () => {
    const model = classifier({ decision: 'allow', reason: 'asked for' });
    env.setup({ settings: autoSettings(), model });
    const admin = await env.principal('admin');
    const turn = await env.turn({ principalId: admin, text: 'send the mail' });
    const lowered = turn.policy.forSubagent!({ label: 'mailer: send it', mode: 'acceptEdits' });
    expect(lowered.mode).toBe('acceptEdits');
    const asked = turn.next('approval_requested');
    const pending = lowered.canUseTool(sendMail, { to: 'sub@example.com' }, turn.toolCtx('toolu_sub_low'));
    expect(await asked).toMatchObject({ source: 'mode' });
    expect(model.requests).toHaveLength(0);
    void pending.catch(() => undefined);

    const same = turn.policy.forSubagent!({ label: 'mailer: send it' });
    expect(same.mode).toBe('auto');
    expect(await same.canUseTool(sendMail, { to: 'sub2@example.com' }, turn.toolCtx('toolu_sub_auto'))).toMatchObject({ behavior: 'allow' });
    expect(model.requests).toHaveLength(1);
  });

  it('starts an early classification only with hooks to wait for, and never for a read-only, file or concurrency-safe tool', () => {
    const auto = new TurnAutoMode(
      {} as ConstructorParameters<typeof TurnAutoMode>[0],
      {} as TurnPolicyContext,
      { settings: {} } as unknown as Session,
      undefined,
    );
    expect(auto.worthStartingEarly(sendMail, true)).toBe(true);
    expect(auto.worthStartingEarly(exec, true)).toBe(true);
    expect(auto.worthStartingEarly(sendMail, false)).toBe(false);
    // `task` and its like: concurrency-safe tools classify their own calls as reads.
    expect(auto.worthStartingEarly({ ...sendMail, name: 'task', concurrencySafe: true }, true)).toBe(false);
    expect(auto.worthStartingEarly({ ...sendMail, readOnly: true }, true)).toBe(false);
  });
});
