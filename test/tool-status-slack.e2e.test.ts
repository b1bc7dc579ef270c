import { describe, expect, it } from 'vitest';
import { GateFifo, execCall, execWorkspace } from './exec-helpers.js';
import { linkedPrincipal } from './principal-helpers.js';
import { USER, httpAccount, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

// Issue 15, acceptance 6 over Slack: while a tool runs the draft shows its status line
// (`🔧 exec echo one…`, the exec progress, then `✅`), and the final answer replaces the draft
// without any status line. The person is an owner (exec is offered to owners) in bypassPermissions.
const env = useSlackEnv({
  account: (slack) => httpAccount(slack, { editInterval: '200ms' }),
  config: { agents: { default: { mode: 'bypassPermissions' } }, tools: { exec: { progressInterval: '200ms' } } },
});

describe('tool progress in Slack drafts (issue 15, acceptance 6)', () => {
  it('a running exec shows 🔧 with its progress in the draft, then ✅; the final answer carries no status line', async () => {
    const { slack, model, gw } = env;
    const IM = slack.identity.imChannelId;
    const ownerId = await linkedPrincipal(gw, 'sam', 'owner', 'slack', `${slack.identity.teamId}:${USER}`);
    const gate = new GateFifo(execWorkspace(gw, ownerId), 'gate.fifo');
    const versions = () => slack.messages(IM, { includeDeleted: true }).flatMap((m) => m.history);
    try {
      model.enqueue(execCall('toolu_slstatus', 'echo one; echo two; read line < gate.fifo; echo done'), { text: 'All **done**.', hold: true });
      await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: 'run the checks' }));

      await slack.waitFor(() => versions().find((t) => t.includes('🔧 exec echo one…')), 20_000, 'the running status line');
      // The exec progress reports reach the same draft (coalesced into its throttled edits).
      const progress = await slack.waitFor(() => versions().find((t) => /🔧 exec echo one… · \d+ lines? so far/.test(t)), 20_000, 'the progress');
      expect(progress).toMatch(/2 lines so far/);
      expect(versions().some((t) => t.includes('read line'))).toBe(false);
      gate.release();
      await slack.waitFor(() => versions().find((t) => t.includes('✅ exec echo one')), 20_000, 'the finished status line');
      model.release();

      const answer = await waitForMessage(slack, IM, 'All *done*.');
      // The draft itself became the answer: its earlier versions held the status lines, the last one does not.
      expect(slack.messages(IM)).toHaveLength(1);
      expect(answer.history.some((t) => t.includes('🔧 exec echo one…'))).toBe(true);
      expect(answer.text).toBe('All *done*.');
      for (const bad of ['🔧', '✅', '❌', 'exec echo']) expect(answer.text).not.toContain(bad);
    } finally {
      gate.close();
    }
  });
});
