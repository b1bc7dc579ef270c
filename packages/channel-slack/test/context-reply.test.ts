import { ChatCommands, type ChannelPeople, type ContextReport } from '@switchboard/core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ApprovalBoard } from '../src/approval-board.js';
import { runSlashCommand, type InteractionDeps } from '../src/interactions.js';

const report: ContextReport = {
  model: 'claude-<!channel>',
  tokens: 900,
  contextWindow: 20_000,
  window: 15_000,
  messages: 6,
  clearedResults: 2,
  lastCompaction: { at: '2026-12-01T23:59:59.000Z', trigger: 'manual', tokensBefore: 14_000, tokensAfter: 700 },
  consumers: [
    { name: 'summary', tokens: 500 },
    { name: 'history', tokens: 300 },
    { name: 'system', tokens: 100 },
    { name: 'tools', tokens: 0 },
    { name: 'tool_results', tokens: 0 },
  ],
};

function deps(): InteractionDeps {
  const people = {
    principalFor: async (identity: string) => (identity === 'slack:T1:U1' ? { principalId: 'p1', role: 'member' } : null),
    contextReport: async () => report,
    usage: async () => ({
      timezone: 'UTC',
      periods: [
        { period: 'day', tokens: 4321, usd: 0.01234, resetsAt: '2026-12-02T00:00:00.000Z', limit: { scope: 'role', id: 'a<!here>', tokens: 5000 } },
        { period: 'month', tokens: 0, usd: 0, resetsAt: '2027-01-01T00:00:00.000Z' },
      ],
    }),
  } as unknown as ChannelPeople;
  return {
    ctx: { people, commands: new ChatCommands(people) } as never,
    api: {} as never,
    board: new ApprovalBoard(),
    account: 'acct',
    log: pino({ level: 'silent' }),
  };
}

// The words are core's (packages/core/test/chat-command-words.test.ts); here: Slack's layout, markup and escaping.
describe('/switchboard context in Slack words', () => {
  it('shows the report in mrkdwn, the model name escaped, empty consumers left out', async () => {
    const text = await runSlashCommand(deps(), { command: '/switchboard', text: 'context', user_id: 'U1', team_id: 'T1', channel_id: 'D1' });
    const lines = text.split('\n');
    // A model name cannot ping a channel: `<` and `>` are escaped.
    expect(lines[0]).toBe('*Context* 900 of 15,000 tokens (6.0%) · model `claude-&lt;!channel&gt;`');
    expect(lines.slice(1)).toEqual([
      'Window: 20,000 tokens, 5,000 kept for the answer',
      'Last compaction: 2026-12-01 23:59 UTC (manual), 14,000 → 700 tokens',
      'Cleared tool results: 2',
      'Top consumers: summary 500 · history 300 · system prompt 100',
    ]);
  });

  it('tells an unknown person nothing about any session', async () => {
    const text = await runSlashCommand(deps(), { command: '/switchboard', text: 'context', user_id: 'U2', team_id: 'T1', channel_id: 'D1' });
    expect(text).not.toContain('Context');
  });
});

describe('/switchboard usage in Slack words', () => {
  it('bolds the title and the spent tokens, puts the role in backticks and escapes it', async () => {
    const text = await runSlashCommand(deps(), { command: '/switchboard', text: 'usage', user_id: 'U1', team_id: 'T1', channel_id: 'D1' });
    expect(text.split('\n')).toEqual([
      '*Your usage*',
      'Today: *4,321 tokens*, $0.0123 · budget 5,000 tokens (role `a&lt;!here&gt;`) · resets 2026-12-02 00:00 UTC',
      'This month: *0 tokens*, $0.0000 · no budget · resets 2027-01-01 00:00 UTC',
    ]);
  });
});

describe('/switchboard compact in Slack words', () => {
  it("answers a refusal with core's sentence, unmarked", async () => {
    const text = await runSlashCommand(deps(), { command: '/switchboard', text: 'compact', user_id: 'U1', team_id: 'T1', channel_id: 'D1' });
    expect(text).toBe('Compaction is not available here.');
  });
});
