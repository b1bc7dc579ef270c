import { describe, expect, it } from 'vitest';
import { ChatCommands, type ChannelPeople, type ConversationRef, type PersonalUsage } from '../../src/index.js';

const conversation: ConversationRef = { channel: 'slack', account: 'team', id: 'D1', kind: 'dm' };
const usage: PersonalUsage = { timezone: 'UTC', periods: [{ period: 'day', tokens: 12, usd: 0.5, resetsAt: '2026-12-02T00:00:00.000Z' }] };

describe('/usage', () => {
  it("answers the sender's own spend as the `spend` outcome, asked for their principal; an unknown sender gets not_paired", async () => {
    const asked: string[] = [];
    const people = {
      principalFor: async (identity: string) => (identity === 'slack:T:U1' ? { principalId: 'p1', role: 'member' } : null),
      usage: async (_c: ConversationRef, principalId: string) => {
        asked.push(principalId);
        return usage;
      },
    } as unknown as ChannelPeople;
    const commands = new ChatCommands(people);
    expect(commands.has('USAGE')).toBe(true);
    expect(await commands.run({ name: 'usage', args: '', conversation, identity: 'slack:T:U1' })).toEqual({ command: 'usage', outcome: 'spend', usage });
    expect(await commands.run({ name: 'usage', args: '', conversation, identity: 'slack:T:U2' })).toEqual({ command: 'usage', outcome: 'not_paired' });
    expect(asked).toEqual(['p1']);
  });
});
