import { describe, expect, it } from 'vitest';
import { commandReply } from '../src/commands.js';

const memory = {
  id: 'mem_0123456789ab',
  scope: 'private' as const,
  principalId: 'p1',
  agentId: null,
  text: 'likes green tea',
  tags: ['tea'],
  createdBy: 'p1',
  createdAt: new Date('2026-12-01T10:00:00Z'),
};

describe('telegram: /memory wording', () => {
  it('lists the memories with ids and says how to forget one', () => {
    const text = commandReply({ command: 'memory', outcome: 'memories', listing: { where: 'dm', memories: [memory], total: 3 } });
    expect(text.split('\n')).toEqual([
      'What I remember (3):',
      'mem_0123456789ab (private, 2026-12-01) [tea]: likes green tea',
      '… and 2 older.',
      'Remove one with /memory forget <id>.',
    ]);
  });

  it('answers forget, a refusal and an empty room listing in plain words', () => {
    expect(commandReply({ command: 'memory', outcome: 'forgotten', id: 'mem_0123456789ab' })).toBe('Forgot mem_0123456789ab.');
    expect(commandReply({ command: 'memory', outcome: 'not_forgotten', id: 'mem_x', reason: 'there is no memory mem_x you can see here' })).toBe(
      'Nothing removed: there is no memory mem_x you can see here.',
    );
    expect(commandReply({ command: 'memory', outcome: 'memories', listing: { where: 'room', memories: [], total: 0 } })).toContain('only team memory');
  });
});
