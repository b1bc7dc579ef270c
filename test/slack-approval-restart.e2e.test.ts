import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { buttonsOf, httpAccount, postSlashCommand, slackUrls, USER, useSlackEnv, waitForMessage } from './slack-helpers.js';
import { findInWorkspaces } from './helpers.js';

const env = useSlackEnv({
  account: (slack) => httpAccount(slack, { allowFrom: [USER] }),
  config: { agents: { default: { mode: 'default' } }, limits: { shutdownGrace: '500ms' } },
});
let IM: string;

beforeAll(() => {
  IM = env.slack.identity.imChannelId;
});

const approvals = async (status: string) =>
  (await api(env.gw, 'GET', `/api/v1/approvals?status=${status}`, { token: env.gw.credentials().operatorToken })).json.approvals as
    | Array<{ id: string }>
    | undefined;

/** A signed `/switchboard <text>` slash command over HTTP (see `postSlashCommand`). */
const slash = (text: string) => postSlashCommand(env, text, IM);

describe('Slack approval cards stay valid across a gateway restart', () => {
  it('a card posted before a restart still answers its approval afterwards (action ids resolve against the stored approval)', async () => {
    const { model, slack } = env;
    model.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'slack-restart.txt', content: 'pressed after restart' } }] },
      { text: 'Saved after the restart.' },
    );
    await slack.deliverEvent(slackUrls(env.gw).events, slack.events.im({ text: 'please save a note' }));
    const card = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    const [approve] = buttonsOf(card);

    env.gw = await env.gw.restart();
    expect((await approvals('pending'))?.map((a) => a.id)).toEqual([approve!.value]);
    // The suspended turn's card was not closed: its buttons are still there to press.
    expect(buttonsOf(slack.messages(IM).find((m) => m.ts === card.ts)!)).toHaveLength(3);

    const ack = await slack.deliverInteraction(
      slackUrls(env.gw).interactive,
      slack.events.blockActions({ actionId: approve!.action_id, value: approve!.value, user: USER, channel: IM, messageTs: card.ts }),
    );
    expect(ack.status).toBe(200);
    await waitForMessage(slack, IM, 'Saved after the restart.');
    const file = findInWorkspaces(env.gw, 'slack-restart.txt');
    expect(file && readFileSync(file, 'utf8')).toBe('pressed after restart');
    expect((await approvals('allowed'))?.map((a) => a.id)).toEqual([approve!.value]);
  });

  it('a card of a stopped turn is told the approval was cancelled', async () => {
    const { model, slack } = env;
    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'slack-stopped.txt', content: 'never' } }] });
    const before = slack.messages(IM).filter((m) => buttonsOf(m).length === 3).length;
    await slack.deliverEvent(slackUrls(env.gw).events, slack.events.im({ text: 'save another note' }));
    const card = await slack.waitFor(() => slack.messages(IM).filter((m) => buttonsOf(m).length === 3)[before], 15_000, 'the second approval buttons');
    const [approve] = buttonsOf(card);
    expect((await slash('stop')).text).toMatch(/Stopped/);
    // The turn's end is shown after its approvals were cancelled.
    await waitForMessage(slack, IM, ':warning:');
    expect((await approvals('cancelled'))?.map((a) => a.id)).toContain(approve!.value);

    const seen = slack.ephemerals.length;
    await slack.deliverInteraction(
      slackUrls(env.gw).interactive,
      slack.events.blockActions({ actionId: approve!.action_id, value: approve!.value, user: USER, channel: IM, messageTs: card.ts }),
    );
    const notice = await slack.waitFor(() => slack.ephemerals.slice(seen).find((e) => e.user === USER), 10_000, 'the cancelled notice');
    expect(notice.text).toMatch(/already decided: it was cancelled/);
    expect(findInWorkspaces(env.gw, 'slack-stopped.txt')).toBeUndefined();
  });
});
