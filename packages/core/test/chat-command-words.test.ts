import { describe, expect, it } from 'vitest';
import { COMPACT_REFUSAL_TEXT, compactedText, contextReportLines, type ContextReport, usageLines } from '../src/index.js';

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

describe('/context words (every chat)', () => {
  it('shows the size against W, the window, the last compaction, cleared results and the consumers largest first', () => {
    expect(contextReportLines(report)).toEqual({
      size: '12,345 of 180,000 tokens (6.9%)',
      model: 'claude-sonnet-4-5',
      details: [
        'Window: 200,000 tokens, 20,000 kept for the answer',
        'Last compaction: 2026-12-01 21:05 UTC (auto), 117,000 → 9,800 tokens',
        'Cleared tool results: 3',
      ],
      consumers: [
        { label: 'history', tokens: '6,000' },
        { label: 'tool results', tokens: '3,000' },
        { label: 'summary', tokens: '2,000' },
        { label: 'tool schemas', tokens: '1,300' },
        { label: 'system prompt', tokens: '45' },
      ],
    });
  });

  it('says never for a session that was never compacted, and leaves out cleared results and empty consumers', () => {
    const w = contextReportLines({
      ...report,
      clearedResults: 0,
      lastCompaction: null,
      consumers: [
        { name: 'tools', tokens: 900 },
        { name: 'summary', tokens: 0 },
      ],
    });
    expect(w.details).toEqual(['Window: 200,000 tokens, 20,000 kept for the answer', 'Last compaction: never']);
    expect(w.consumers).toEqual([{ label: 'tool schemas', tokens: '900' }]);
  });

  it('keeps the model name raw (each channel escapes it) and shows a share of an empty window as —', () => {
    const w = contextReportLines({ ...report, model: 'claude-<!channel>', tokens: 900, contextWindow: 0, window: 0 });
    expect(w.model).toBe('claude-<!channel>');
    expect(w.size).toBe('900 of 0 tokens (—)');
  });
});

describe('/usage words (every chat)', () => {
  it('shows each period with tokens, USD, the budget that applies (whose) and the reset in the budget time zone', () => {
    const w = usageLines({
      timezone: 'Europe/Berlin',
      periods: [
        { period: 'day', tokens: 4321, usd: 0.01234, resetsAt: '2026-12-01T23:00:00.000Z', limit: { scope: 'role', id: 'member', tokens: 5000 } },
        {
          period: 'month',
          tokens: 123456,
          usd: 1.5,
          resetsAt: '2026-12-31T23:00:00.000Z',
          limit: { scope: 'principal', id: 'p1', tokens: 1_000_000, usd: 20 },
        },
      ],
    });
    expect(w).toEqual({
      title: 'Your usage',
      periods: [
        { name: 'Today', tokens: '4,321 tokens', usd: '$0.0123', budget: 'budget 5,000 tokens', role: 'member', resets: '2026-12-02 00:00 Europe/Berlin' },
        { name: 'This month', tokens: '123,456 tokens', usd: '$1.5000', budget: 'budget 1,000,000 tokens / $20.00', resets: '2027-01-01 00:00 Europe/Berlin' },
      ],
    });
  });

  it('says "no budget" for a period without one, and names no role', () => {
    const w = usageLines({ timezone: 'UTC', periods: [{ period: 'day', tokens: 0, usd: 0, resetsAt: '2026-12-02T00:00:00.000Z' }] });
    expect(w.periods).toEqual([{ name: 'Today', tokens: '0 tokens', usd: '$0.0000', budget: 'no budget', resets: '2026-12-02 00:00 UTC' }]);
  });

  it('shows a USD-only budget of a role', () => {
    const w = usageLines({
      timezone: 'UTC',
      periods: [{ period: 'month', tokens: 1, usd: 0.5, resetsAt: '2027-01-01T00:00:00.000Z', limit: { scope: 'role', id: 'guest', usd: 2 } }],
    });
    expect(w.periods[0]).toMatchObject({ budget: 'budget $2.00', role: 'guest' });
  });
});

describe('/compact words (every chat)', () => {
  it('says what compaction did, and why it did nothing, one sentence per reason', () => {
    expect(compactedText(9000, 800)).toBe('Compacted the conversation: about 9000 → 800 tokens. The full history stays in the transcript.');
    expect(COMPACT_REFUSAL_TEXT).toEqual({
      busy: 'Not compacted: an answer is in progress. Try again when it has finished.',
      nothing: 'Not compacted: the conversation is still short.',
      admins_only: 'Not compacted: in a shared conversation, only owners and admins can compact it.',
      failed: 'Not compacted: the summary could not be written. Nothing changed; try again later.',
      unavailable: 'Compaction is not available here.',
    });
  });
});
