import { readFileSync } from 'node:fs';
import { api } from '@switchboard/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { findInWorkspaces, toolResultFor } from './helpers.js';
import { buttonsOf, httpAccount, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv({ account: (slack) => httpAccount(slack), config: { agents: { default: { mode: 'acceptEdits' } } } });
let IM: string;
let sessionId: string;

const operator = () => env.gw.credentials().operatorToken;

beforeAll(async () => {
  IM = env.slack.identity.imChannelId;
  await env.slack.deliverEvent(slackUrls(env.gw).events, env.slack.events.im({ text: 'hello' }));
  await waitForMessage(env.slack, IM, 'echo: hello');
  const sessions = await api(env.gw, 'GET', '/api/v1/sessions?channel=slack', { token: operator() });
  sessionId = (sessions.json.sessions as Array<{ id: string }>)[0]!.id;
});

/** Puts the session in plan mode (control API), starts a turn that presents `plan`, and returns the approval message. */
async function presentPlan(plan: string, id: string, then: string) {
  const { slack, model, gw } = env;
  expect((await api(gw, 'PUT', `/api/v1/sessions/${sessionId}/mode`, { token: operator(), body: { mode: 'plan' } })).status).toBe(200);
  const shown = slack.messages(IM).length;
  model.enqueue(
    { toolUses: [{ name: 'exit_plan_mode', input: { plan }, id: `toolu_plan_${id}` }] },
    { toolUses: [{ name: 'write_file', input: { path: `${id}.txt`, content: id }, id: `toolu_write_${id}` }] },
    { text: then },
  );
  await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: `plan ${id}` }));
  return slack.waitFor(
    () =>
      slack
        .messages(IM)
        .slice(shown)
        .find((m) => buttonsOf(m).length > 0),
    15_000,
    'the plan approval',
  );
}

const press = (request: { ts: string }, button: { action_id: string; value: string }) =>
  env.slack.deliverInteraction(
    slackUrls(env.gw).interactive,
    env.slack.events.blockActions({ actionId: button.action_id, value: button.value, channel: IM, messageTs: request.ts }),
  );

describe('Slack: plan approval with Block Kit buttons', () => {
  it('Keep planning keeps plan mode: the write that follows is refused', async () => {
    const request = await presentPlan('Write s1.txt.', 's1', 'Still planning.');
    expect(request.text).toContain('exit_plan_mode');
    expect(JSON.stringify(request.blocks)).toContain('Proceed with this plan?');
    const buttons = buttonsOf(request);
    expect(buttons.map((b) => b.action_id.split(':')[1])).toEqual(['allow', 'edits', 'deny']);
    expect((await press(request, buttons[2]!)).status).toBe(200);
    await waitForMessage(env.slack, IM, 'Still planning.');
    expect(String(toolResultFor(env.model, 'toolu_plan_s1').content)).toMatch(/did not approve the plan/);
    expect(String(toolResultFor(env.model, 'toolu_write_s1').content)).toMatch(/plan mode/);
    expect(findInWorkspaces(env.gw, 's1.txt')).toBeUndefined();
  });

  it('Proceed (accept edits) switches the session to acceptEdits: the write runs without another approval', async () => {
    const request = await presentPlan('Write s2.txt.', 's2', 'Plan carried out.');
    const edits = buttonsOf(request)[1]!;
    expect((await press(request, edits)).status).toBe(200);
    await waitForMessage(env.slack, IM, 'Plan carried out.');
    expect(readFileSync(findInWorkspaces(env.gw, 's2.txt')!, 'utf8')).toBe('s2');
    expect(String(toolResultFor(env.model, 'toolu_plan_s2').content)).toMatch(/now in acceptEdits mode/);
    const session = await api(env.gw, 'GET', '/api/v1/sessions?channel=slack', { token: operator() });
    expect((session.json.sessions as Array<{ id: string; settings: { mode?: string } }>).find((s) => s.id === sessionId)?.settings.mode).toBe('acceptEdits');
  });
});
