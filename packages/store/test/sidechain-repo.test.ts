import type { Storage } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { queueTurn } from './contract/fixtures.js';
import { engines, rawExec } from './engines.js';

let s: Storage;
afterEach(async () => s.close());

const prompt = [{ role: 'user', content: [{ type: 'text', text: 'the task' }] }];

describe.each(engines())('sidechains (subagent transcripts, %s)', (_name, engine) => {
  it('are started once, saved, listed by session and read back by tool_use id', async () => {
    s = await engine.open();
    const { sessionId, turnId } = await queueTurn(s, 'm1');
    expect(await s.sidechains.start({ sessionId, toolUseId: 'toolu_1', turnId, type: 'general', description: 'd', messages: prompt })).toBe(true);
    // A second start for the same tool_use keeps the first.
    expect(await s.sidechains.start({ sessionId, toolUseId: 'toolu_1', turnId, type: 'other', description: 'x', messages: [] })).toBe(false);
    const reply = { role: 'assistant', content: [{ type: 'text', text: 'report' }] };
    await s.sidechains.save(sessionId, 'toolu_1', [...prompt, reply], 'completed');
    expect(await s.sidechains.get(sessionId, 'toolu_1')).toMatchObject({ type: 'general', turnId, state: 'completed', messages: [...prompt, reply] });
    expect(await s.sidechains.get(sessionId, 'toolu_2')).toBeNull();
    expect(await s.sidechains.get('other-session', 'toolu_1')).toBeNull();
    expect((await s.sidechains.list(sessionId)).map((c) => c.toolUseId)).toEqual(['toolu_1']);
    // Never part of the session's entries.
    expect(await s.sessions.load(sessionId)).toEqual([]);
  });

  it('running ones become interrupted at start-up; a purge deletes them with the session content', async () => {
    s = await engine.open();
    const { sessionId, turnId } = await queueTurn(s, 'm1');
    await s.sidechains.start({ sessionId, toolUseId: 'toolu_run', turnId, type: 'general', description: 'd', messages: prompt });
    await s.sidechains.start({ sessionId, toolUseId: 'toolu_done', turnId, type: 'general', description: 'd', messages: prompt });
    await s.sidechains.save(sessionId, 'toolu_done', prompt, 'completed');
    expect(await s.sidechains.interruptRunning()).toBe(1);
    expect((await s.sidechains.list(sessionId)).map((c) => [c.toolUseId, c.state])).toEqual([
      ['toolu_run', 'interrupted'],
      ['toolu_done', 'completed'],
    ]);
    await s.sessions.purge(sessionId);
    expect(await s.sidechains.list(sessionId)).toEqual([]);
  });

  it('only the running ones of the given turns become interrupted (a replica resuming turns another one left)', async () => {
    s = await engine.open();
    const left = await queueTurn(s, 'm1');
    const alive = await queueTurn(s, 'm2');
    await s.sidechains.start({ sessionId: left.sessionId, toolUseId: 'toolu_left', turnId: left.turnId, type: 'general', description: 'd', messages: prompt });
    await s.sidechains.start({
      sessionId: alive.sessionId,
      toolUseId: 'toolu_alive',
      turnId: alive.turnId,
      type: 'general',
      description: 'd',
      messages: prompt,
    });
    expect(await s.sidechains.interruptRunning([left.turnId, 'no-such-turn'])).toBe(1);
    expect(await s.sidechains.interruptRunning([])).toBe(0);
    expect((await s.sidechains.get(left.sessionId, 'toolu_left'))?.state).toBe('interrupted');
    expect((await s.sidechains.get(alive.sessionId, 'toolu_alive'))?.state).toBe('running');
  });

  it('a damaged row reads as an empty, failed sidechain instead of throwing', async () => {
    s = await engine.open();
    const { sessionId, turnId } = await queueTurn(s, 'm1');
    await s.sidechains.start({ sessionId, toolUseId: 'toolu_bad', turnId, type: 'general', description: 'd', messages: prompt });
    await rawExec(s, "UPDATE sidechains SET messages = '{not json', state = 'weird'");
    expect(await s.sidechains.get(sessionId, 'toolu_bad')).toMatchObject({ messages: [], state: 'failed' });
    await rawExec(s, 'UPDATE sidechains SET messages = \'{"a":1}\'');
    expect((await s.sidechains.get(sessionId, 'toolu_bad'))?.messages).toEqual([]);
  });
});
