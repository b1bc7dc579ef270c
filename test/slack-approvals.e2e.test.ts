import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { httpAccount, slackUrls, USER, useSlackEnv, waitForMessage, buttonsOf } from './slack-helpers.js';
import { findInWorkspaces } from './helpers.js';

const TEAMMATE = 'U0USER0002';
const STRANGER = 'U0STRANGER';

const env = useSlackEnv({
  account: (slack) => httpAccount(slack, { allowFrom: [USER, TEAMMATE] }),
  config: { agents: { default: { mode: 'default' } } },
});
let IM: string;

beforeAll(() => {
  IM = env.slack.identity.imChannelId;
});

describe('Slack approvals with Block Kit buttons', () => {
  it('the requester approves with a button; a teammate and a stranger are refused; a second press is told it was decided; one decision', async () => {
    const { model, slack, gw } = env;
    const urls = slackUrls(gw);
    // The teammate talks to the assistant first, so they are a known person (a member) too.
    const TEAM_IM = 'D0DM000002';
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'hello from the teammate', user: TEAMMATE, channel: TEAM_IM }));
    await waitForMessage(slack, TEAM_IM, 'echo: hello from the teammate');

    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'slack-note.txt', content: 'approved in Slack' } }] }, { text: 'Saved the note.' });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'please save a note' }));
    const request = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    expect(request.text).toContain('write_file');
    const [approve, deny, always] = buttonsOf(request);
    expect([approve!.action_id, deny!.action_id, always!.action_id].map((a) => a.split(':')[1])).toEqual(['allow', 'deny', 'always']);
    const press = (user: string, actionId: string) =>
      slack.deliverInteraction(urls.interactive, slack.events.blockActions({ actionId, value: approve!.value, user, channel: IM, messageTs: request.ts }));

    expect((await press(TEAMMATE, approve!.action_id)).status).toBe(200);
    const refused = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === TEAMMATE), 10_000, 'the teammate refusal');
    expect(refused.text).toMatch(/can't answer this approval/);
    expect((await press(STRANGER, approve!.action_id)).status).toBe(200);
    const unknown = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === STRANGER), 10_000, 'the stranger refusal');
    expect(unknown.text).toMatch(/does not know you/);
    const pending = await api(gw, 'GET', '/api/v1/approvals?status=pending', { token: gw.credentials().operatorToken });
    expect(pending.json.approvals).toHaveLength(1);

    // Slack needs the 200 within 3 s; that time is the bench's to measure, not a test's to assert.
    const ack = await press(USER, approve!.action_id);
    expect(ack.status).toBe(200);
    const done = await slack.waitFor(() => slack.messages(IM).find((m) => m.ts === request.ts && m.text.includes('Approved')), 10_000, 'the decided approval');
    expect(done.text).toContain(`<@${USER}>`);
    expect(buttonsOf(done)).toHaveLength(0);
    await waitForMessage(slack, IM, 'Saved the note.');
    const file = findInWorkspaces(gw, 'slack-note.txt');
    expect(file && readFileSync(file, 'utf8')).toBe('approved in Slack');

    expect((await press(USER, deny!.action_id)).status).toBe(200);
    const second = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === USER), 10_000, 'the already-decided notice');
    expect(second.text).toMatch(/already decided: it was already allowed by <@U0USER0001>/);

    const all = await api(gw, 'GET', '/api/v1/approvals', { token: gw.credentials().operatorToken });
    expect(all.json.approvals).toHaveLength(1);
    expect(all.json.approvals[0]).toMatchObject({ tool: 'write_file', status: 'allowed', always: false });
    expect(all.json.approvals[0].decidedBy).toBe(`principal:${all.json.approvals[0].requesterPrincipalId}`);
  });

  it('Deny by button: the tool does not run and the model is told', async () => {
    const { model, slack, gw } = env;
    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'denied.txt', content: 'never' } }] }, { text: 'Understood, not saving.' });
    await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: 'save another note' }));
    const request = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    const deny = buttonsOf(request)[1]!;
    await slack.deliverInteraction(
      slackUrls(gw).interactive,
      slack.events.blockActions({ actionId: deny.action_id, value: deny.value, channel: IM, messageTs: request.ts }),
    );
    await slack.waitFor(() => slack.messages(IM).find((m) => m.ts === request.ts && m.text.includes('Denied')), 10_000, 'the denied approval');
    await waitForMessage(slack, IM, 'Understood, not saving.');
    expect(findInWorkspaces(gw, 'denied.txt')).toBeUndefined();
    const toolResult = JSON.stringify(model.requests.at(-1)!.body.messages?.at(-1));
    expect(toolResult).toContain('is_error');
  });
});
