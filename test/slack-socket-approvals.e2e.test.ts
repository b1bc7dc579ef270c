import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, type FakeAnthropic, type FakeSlack, type GatewayProcess, type SlackStoredMessage } from '@switchboard/testkit';
import { postedCanaries } from './slack-leaks.js';
import { leakedCanaries, socketAccount, USER, useSlackEnv, waitForMessage, buttonsOf, type SlackButton } from './slack-helpers.js';
import { findInWorkspaces } from './helpers.js';

const TEAMMATE = 'U0USER0002';
const TEAM_IM = 'D0DM000002';
const STRANGER = 'U0STRANGER';

const env = useSlackEnv({
  account: (slack) => socketAccount(slack, { allowFrom: [USER, TEAMMATE] }),
  config: { agents: { default: { mode: 'default' } } },
});
let model: FakeAnthropic;
let slack: FakeSlack;
let gw: GatewayProcess;
let IM: string;

beforeAll(async () => {
  ({ model, slack, gw } = env);
  IM = slack.identity.imChannelId;
  await gw.waitForLog('slack socket connected');
});

const operator = () => ({ token: gw.credentials().operatorToken });

/** Presses `button` of the approval message `request` over the socket (an `interactive` envelope); resolves on its ack. */
const press = (request: SlackStoredMessage, button: SlackButton, user: string) =>
  slack.socketSendInteractive(
    slack.events.blockActions({ actionId: button.action_id, value: button.value, user, channel: request.channel, messageTs: request.ts }),
  );

describe('Slack approvals with Block Kit buttons over Socket Mode', () => {
  it('the requester approves with a button; a teammate and a stranger are refused; a second press is told it was decided; one decision', async () => {
    // The teammate talks to the assistant first, so they are a known person (a member) too.
    await slack.socketSend(slack.events.im({ text: 'hello from the teammate', user: TEAMMATE, channel: TEAM_IM }));
    await waitForMessage(slack, TEAM_IM, 'echo: hello from the teammate');

    model.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'socket-note.txt', content: 'approved over the socket' } }] },
      { text: 'Saved the socket note.' },
    );
    await slack.socketSend(slack.events.im({ text: 'please save a note' }));
    const request = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    expect(request.text).toContain('write_file');
    const [approve, deny] = buttonsOf(request);

    const refusedAck = await press(request, approve!, TEAMMATE);
    // The envelope is acked with an empty payload: nothing is answered in the ack.
    expect(refusedAck.type).toBe('interactive');
    expect(refusedAck.payload ?? {}).toEqual({});
    const refused = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === TEAMMATE), 10_000, 'the teammate refusal');
    expect(refused.text).toMatch(/can't answer this approval/);
    expect(refused.channel).toBe(IM);
    await press(request, approve!, STRANGER);
    const unknown = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === STRANGER), 10_000, 'the stranger refusal');
    expect(unknown.text).toMatch(/does not know you/);
    const pending = await api(gw, 'GET', '/api/v1/approvals?status=pending', operator());
    expect(pending.json.approvals).toHaveLength(1);
    expect(slack.messages(IM).find((m) => m.ts === request.ts)!.edits).toBe(0);

    const ack = await press(request, approve!, USER);
    expect(ack.elapsedMs).toBeLessThan(3000);
    const done = await slack.waitFor(() => slack.messages(IM).find((m) => m.ts === request.ts && m.text.includes('Approved')), 10_000, 'the decided approval');
    expect(done.text).toContain(`<@${USER}>`);
    expect(buttonsOf(done)).toHaveLength(0);
    await waitForMessage(slack, IM, 'Saved the socket note.');
    const file = findInWorkspaces(gw, 'socket-note.txt');
    expect(file && readFileSync(file, 'utf8')).toBe('approved over the socket');

    await press(request, deny!, USER);
    const second = await slack.waitFor(() => slack.ephemerals.find((e) => e.user === USER), 10_000, 'the already-decided notice');
    expect(second.text).toMatch(new RegExp(`already decided: it was already allowed by <@${USER}>`));

    const all = await api(gw, 'GET', '/api/v1/approvals', operator());
    expect(all.json.approvals).toHaveLength(1);
    expect(all.json.approvals[0]).toMatchObject({ tool: 'write_file', status: 'allowed', always: false });
    expect(all.json.approvals[0].decidedBy).toBe(`principal:${all.json.approvals[0].requesterPrincipalId}`);
    // The decided message was edited once, by the winning press.
    expect(slack.messages(IM).find((m) => m.ts === request.ts)!.edits).toBe(1);
  });

  it('Deny by button over the socket: the tool does not run and the model is told', async () => {
    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'socket-denied.txt', content: 'never' } }] }, { text: 'Understood, not saving it.' });
    await slack.socketSend(slack.events.im({ text: 'save another note' }));
    const request = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    await press(request, buttonsOf(request)[1]!, USER);
    await slack.waitFor(() => slack.messages(IM).find((m) => m.ts === request.ts && m.text.includes('Denied')), 10_000, 'the denied approval');
    await waitForMessage(slack, IM, 'Understood, not saving it.');
    expect(findInWorkspaces(gw, 'socket-denied.txt')).toBeUndefined();
    expect(JSON.stringify(model.requests.at(-1)!.body.messages?.at(-1))).toContain('is_error');
  });

  it('never puts a token or the signing secret in a message or a log', () => {
    expect(postedCanaries(slack)).toBe(0);
    expect(leakedCanaries(gw)).toBe(0);
  });
});
