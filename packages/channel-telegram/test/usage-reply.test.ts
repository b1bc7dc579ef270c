import { describe, expect, it } from 'vitest';
import { commandReply } from '../src/commands.js';

// The words of each period are core's (packages/core/test/chat-command-words.test.ts); here: Telegram's plain-text layout.
describe('telegram: /usage wording', () => {
  it('shows each period with tokens, USD, the budget that applies (whose) and the reset in the budget time zone', () => {
    const text = commandReply({
      command: 'usage',
      outcome: 'spend',
      usage: {
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
      },
    });
    expect(text.split('\n')).toEqual([
      'Your usage:',
      'Today: 4,321 tokens, $0.0123 of budget 5,000 tokens (role member); resets 2026-12-02 00:00 Europe/Berlin',
      'This month: 123,456 tokens, $1.5000 of budget 1,000,000 tokens / $20.00; resets 2027-01-01 00:00 Europe/Berlin',
    ]);
  });

  it('says "no budget" for a period without one', () => {
    const text = commandReply({
      command: 'usage',
      outcome: 'spend',
      usage: { timezone: 'UTC', periods: [{ period: 'day', tokens: 0, usd: 0, resetsAt: '2026-12-02T00:00:00.000Z' }] },
    });
    expect(text).toBe('Your usage:\nToday: 0 tokens, $0.0000 of no budget; resets 2026-12-02 00:00 UTC');
  });
});
