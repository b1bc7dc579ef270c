import { describe, expect, it } from 'vitest';
import type { TurnEndFacts } from '../src/index.js';
import { harness, say } from './engine-fixtures.js';

describe('TurnEngine onTurnEnd (metrics)', () => {
  it('tells each ended turn once, with its channel, account, agent, state, reason and duration, before the end is rendered', async () => {
    const ends: TurnEndFacts[] = [];
    const rendered: number[] = [];
    let h: ReturnType<typeof harness> | undefined;
    h = harness({
      steps: [say('one'), say('two')],
      onTurnEnd: (end) => {
        ends.push(end);
        rendered.push(h!.channel.renders.filter((r) => r.events.some((e) => e.type === 'turn_end')).length);
      },
      policy: (ctx, base) => (ctx.message.text === 'refuse me' ? { ...base, beforeTurn: async () => 'refused by a hook' } : base),
    });
    await h.send('m1', 'hello');
    await h.send('m2', 'refuse me');
    await h.send('m3', 'again');
    expect(await h.engine.drain(60_000)).toBe(true);
    expect(ends.map((e) => [e.channel, e.account, e.agentId, e.state, e.reason])).toEqual([
      ['websocket', 'default', 'main', 'completed', 'completed'],
      ['websocket', 'default', 'main', 'failed', 'hook_stopped'],
      ['websocket', 'default', 'main', 'completed', 'completed'],
    ]);
    for (const e of ends) expect(e.durationMs).toBeGreaterThanOrEqual(0);
    // Each end was told before its own turn_end reached the channel.
    expect(rendered).toEqual([0, 1, 2]);
  });

  it('a turn that fails inside the gateway is told as internal; a throwing observer never fails a turn', async () => {
    const ends: string[] = [];
    const h = harness({
      steps: [say('fine')],
      onTurnEnd: (end) => {
        ends.push(end.reason);
        throw new Error('observer broke');
      },
      policy: (ctx, base) => {
        if (ctx.message.text === 'break the policy') throw new Error('policy broke');
        return base;
      },
    });
    const broken = await h.send('m1', 'break the policy');
    const fine = await h.send('m2', 'hello');
    expect(await h.engine.drain(60_000)).toBe(true);
    expect(ends).toEqual(['internal', 'completed']);
    expect((await h.raw.turns.get(broken.turnId))?.state).toBe('failed');
    expect((await h.raw.turns.get(fine.turnId))?.state).toBe('completed');
  });
});
