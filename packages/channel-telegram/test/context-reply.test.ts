import type { ContextReport } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { commandReply } from '../src/commands.js';

const report: ContextReport = {
  model: 'claude-sonnet-4-5',
  tokens: 12_345,
  contextWindow: 200_000,
  window: 180_000,
  messages: 40,
  clearedResults: 3,
  lastCompaction: { at: '2026-12-01T21:05:30.000Z', trigger: 'auto', tokensBefore: 117_000, tokensAfter: 9_800 },
  consumers: [
    { name: 'history', tokens: 6_000 },
    { name: 'tool_results', tokens: 3_000 },
    { name: 'summary', tokens: 2_000 },
    { name: 'tools', tokens: 1_300 },
    { name: 'system', tokens: 45 },
  ],
};

describe('/context in Telegram words', () => {
  it('shows the size against W, the window, the last compaction, cleared results and the consumers largest first', () => {
    expect(commandReply({ command: 'context', outcome: 'report', report })).toBe(
      [
        'Context: 12,345 of 180,000 tokens (6.9%) · model claude-sonnet-4-5',
        'Window: 200,000 tokens, 20,000 kept for the answer',
        'Last compaction: 2026-12-01 21:05 UTC (auto), 117,000 → 9,800 tokens',
        'Cleared tool results: 3',
        'Top consumers:',
        '  history: 6,000',
        '  tool results: 3,000',
        '  summary: 2,000',
        '  tool schemas: 1,300',
        '  system prompt: 45',
      ].join('\n'),
    );
  });

  // The words (never compacted, empty consumers left out, …) are core's: packages/core/test/chat-command-words.test.ts.
  it('lists the consumers one per indented line under their heading, and adds no markup', () => {
    const text = commandReply({
      command: 'context',
      outcome: 'report',
      report: {
        ...report,
        model: 'claude-<b>',
        clearedResults: 0,
        lastCompaction: null,
        consumers: [
          { name: 'tools', tokens: 900 },
          { name: 'summary', tokens: 0 },
        ],
      },
    });
    expect(text.startsWith('Context: 12,345 of 180,000 tokens (6.9%) · model claude-<b>\n')).toBe(true);
    expect(text.endsWith('Last compaction: never\nTop consumers:\n  tool schemas: 900')).toBe(true);
  });
});
