import { openSqliteStorage } from '@switchboard/store';
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { RecordingChannel, TEST_STAMP, gate, harness, message, say, testTool } from './engine-fixtures.js';

const kinds = (events: TurnEvent[]) => events.map((e) => e.type);
/** Waits until every lane is idle (the safety cap is not a timing assertion). */
const settled = async (h: { engine: { drain(ms: number): Promise<boolean> } }) => expect(await h.engine.drain(60_000)).toBe(true);

describe('TurnEngine: a text turn', () => {
  it('streams, ends with the answer, stores user and assistant entries and costs two writes: accept, then the end together with the ledger row of the final', async () => {
    const h = harness({ steps: [say('hello there')] });
    const { turnId, sessionId } = await h.send('m1', 'hi');
    await settled(h);

    const render = await h.channel.nth(1);
    expect(render).toMatchObject({ turnId, meta: { clientId: null, resumed: false } });
    expect(kinds(render.events)).toEqual(['text_delta', 'usage', 'assistant_message', 'turn_end']);
    expect(RecordingChannel.end(render)).toEqual({ type: 'turn_end', state: 'completed', reason: 'completed', text: 'hello there' });
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'completed', reason: 'completed', usage: { inputTokens: 1, outputTokens: 1 } });
    expect((await h.raw.sessions.load(sessionId)).map((e) => [e.seq, e.kind, e.turnId])).toEqual([
      [1, 'user', turnId],
      [2, 'assistant', turnId],
    ]);
    // accept; then begin + entries + end + the final's ledger row in one transaction.
    expect(h.writes).toEqual(['turns.accept', 'turns.finish']);
    expect((await h.raw.deliveries.ofTurn(turnId)).map((d) => [d.kind, d.part, d.content.text])).toEqual([['final', 0, 'hello there']]);
    expect(h.afterTurn).toEqual(['completed']);
    expect(h.cancelled).toEqual([turnId]);
  });

  it('a channel that does not mark its last part costs one more write and ends the turn the same way', async () => {
    const h = harness({ steps: [say('hello there')], markLast: false });
    const { turnId } = await h.send('m1', 'hi');
    await settled(h);
    expect(h.writes).toEqual(['turns.accept', 'deliveries.record', 'turns.finish']);
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'completed', reason: 'completed' });
    expect((await h.raw.deliveries.ofTurn(turnId)).map((d) => [d.kind, d.part])).toEqual([['final', 0]]);
  });

  it('when the joined finish fails the channel hears it, and the engine still records the end on its own', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const finish = raw.turns.finish.bind(raw.turns);
    let failures = 0;
    raw.turns.finish = async (turnId, end) => {
      if (end.delivery && failures++ === 0) throw new Error('disk full');
      return finish(turnId, end);
    };
    const h = harness({ steps: [say('hello there')], raw });
    const { turnId } = await h.send('m1', 'hi');
    await settled(h);
    expect(failures).toBe(1);
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'completed', reason: 'completed' });
    expect((await h.raw.sessions.load((await h.raw.turns.get(turnId))!.sessionId)).map((e) => e.kind)).toEqual(['user', 'assistant']);
  });

  it('the next turn sees the history the finish stored (the transcript cache mirrors the stored entries)', async () => {
    const h = harness({ steps: [say('one'), say('two')] });
    const first = await h.send('m1', 'first');
    await settled(h);
    const second = await h.send('m2', 'second');
    await settled(h);
    expect(h.model.requests[1]?.messages).toEqual([
      { role: 'user', content: [TEST_STAMP, { type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
      { role: 'user', content: [TEST_STAMP, { type: 'text', text: 'second' }] },
    ]);
    expect((await h.raw.sessions.load(second.sessionId)).map((e) => [e.seq, e.turnId])).toEqual([
      [1, first.turnId],
      [2, first.turnId],
      [3, second.turnId],
      [4, second.turnId],
    ]);
    expect(RecordingChannel.end(await h.channel.nth(2))?.text).toBe('two');
  });

  it('a model error fails the turn with its message and keeps the user entry', async () => {
    const h = harness({ steps: [] }); // script exhausted: the client throws
    const { turnId, sessionId } = await h.send('m1', 'hi');
    await settled(h);
    const end = RecordingChannel.end(await h.channel.nth(1));
    expect(end).toMatchObject({ type: 'turn_end', state: 'failed', reason: 'model_error' });
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'failed', reason: 'model_error' });
    expect((await h.raw.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user']);
    expect(h.writes).toEqual(['turns.accept', 'turns.finish']);
  });
});

describe('TurnEngine: the date and time of a turn', () => {
  it('is stamped into the user entry when the turn starts, before the text, stored, and never recomputed', async () => {
    let clock = new Date('2026-12-01T23:59:10Z');
    const h = harness({ steps: [say('one'), say('two')], now: () => clock, timezone: 'Europe/Berlin' });
    const first = await h.send('m1', 'first');
    await settled(h);
    const stamp1 = { type: 'text', text: 'Current time: 2026-12-02 00:59 Europe/Berlin (Wednesday)' };
    expect(h.model.requests[0]?.messages).toEqual([{ role: 'user', content: [stamp1, { type: 'text', text: 'first' }] }]);
    const stored = await h.raw.sessions.load(first.sessionId);
    expect(stored[0]).toMatchObject({ kind: 'user', payload: { content: [{ type: 'text', text: 'first' }], stamp: stamp1.text } });

    clock = new Date('2026-12-03T08:00:00Z');
    await h.send('m2', 'second');
    await settled(h);
    const [earlier, answer, latest] = h.model.requests[1]!.messages;
    // The first turn's message is sent again exactly as before (a stable prefix for the cache).
    expect(JSON.stringify(earlier)).toBe(JSON.stringify(h.model.requests[0]!.messages[0]));
    expect(answer).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'one' }] });
    expect(latest).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Current time: 2026-12-03 09:00 Europe/Berlin (Thursday)' },
        { type: 'text', text: 'second' },
      ],
    });
    // The channel's answer carries only the assistant's text.
    expect(RecordingChannel.end(await h.channel.nth(2))?.text).toBe('two');
  });
});

describe('TurnEngine: a tool turn', () => {
  it('a read-only call: the tool_use is durable before the permission check, the rest goes with the finish', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const checks: string[][] = [];
    const read = testTool('read_file', true, async (input) => `contents of ${input.path}`);
    const h = harness({
      raw,
      tools: [read],
      steps: [{ content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.txt' } }] }, say('read it')],
      policy: (ctx, base) => ({
        ...base,
        canUseTool: async () => {
          checks.push((await raw.sessions.loadTurn(ctx.turn.id)).map((e) => e.kind));
          return { behavior: 'allow' };
        },
      }),
    });
    const { turnId, sessionId } = await h.send('m1', 'read a.txt');
    await settled(h);
    expect(checks).toEqual([['user', 'assistant']]);
    const render = await h.channel.nth(1);
    expect(kinds(render.events)).toEqual(['usage', 'assistant_message', 'tool_start', 'tool_end', 'text_delta', 'usage', 'assistant_message', 'turn_end']);
    expect(RecordingChannel.end(render)).toMatchObject({ state: 'completed', text: 'read it' });
    expect((await h.raw.sessions.load(sessionId)).map((e) => [e.seq, e.kind])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool_start'],
      [4, 'tool_result'],
      [5, 'assistant'],
    ]);
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'completed' });
    expect(h.writes).toEqual(['turns.accept', 'turns.begin', 'turns.finish']);
  });

  it('a call with side effects: its start is durable before it runs and its result right after', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const seen: Array<{ kinds: string[]; state: string | undefined }> = [];
    const write = testTool('write_file', false, async (_input, ctx) => {
      seen.push({ kinds: (await raw.sessions.loadTurn(ctx.turnId)).map((e) => e.kind), state: (await raw.turns.get(ctx.turnId))?.state });
      return 'written';
    });
    const h = harness({
      raw,
      tools: [write],
      steps: [{ content: [{ type: 'tool_use', id: 'tu1', name: 'write_file', input: { path: 'b.txt' } }] }, say('done')],
    });
    const { turnId } = await h.send('m1', 'write b.txt');
    await settled(h);
    expect(seen).toEqual([{ kinds: ['user', 'assistant', 'tool_start'], state: 'running' }]);
    expect((await h.raw.sessions.loadTurn(turnId)).map((e) => e.kind)).toEqual(['user', 'assistant', 'tool_start', 'tool_result', 'assistant']);
    expect(h.writes).toEqual(['turns.accept', 'turns.begin', 'turns.append', 'turns.append', 'turns.finish']);
  });
});

describe('TurnEngine: resume', () => {
  it('a resumed turn whose answer is stored is only delivered: no model call, one finish', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const accepted = await raw.turns.accept(message('m1', 'hi'), harness({ raw }).route());
    const turnId = accepted.turnId!;
    const sessionId = accepted.sessionId!;
    // What a previous process left: the turn begun, its answer stored, then suspended.
    await raw.turns.begin(turnId, [{ kind: 'user', turnId, payload: { content: [{ type: 'text', text: 'hi' }] } }]);
    await raw.sessions.append(sessionId, [{ kind: 'assistant', turnId, payload: { content: [{ type: 'text', text: 'stored answer' }], model: 'm' } }]);
    await raw.turns.setState(turnId, 'suspended', { reason: 'shutdown' });

    const h = harness({ raw, steps: [] });
    expect(await h.engine.resumeAll()).toBe(1);
    await settled(h);
    const render = await h.channel.nth(1);
    expect(render.meta).toEqual({ clientId: null, resumed: true });
    expect(render.events).toEqual([
      { type: 'attempt_reset', reason: 'resumed after restart' },
      { type: 'turn_end', state: 'completed', reason: 'completed', text: 'stored answer' },
    ]);
    expect(h.model.requests).toHaveLength(0);
    expect(await raw.turns.get(turnId)).toMatchObject({ state: 'completed', reason: 'completed', usage: null });
    expect(await raw.sessions.load(sessionId)).toHaveLength(2);
    expect(h.writes).toEqual(['turns.finish']);
  });

  it('a side-effecting call cut off by a restart gets an "unknown" result and is not run again', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const accepted = await raw.turns.accept(message('m1', 'write'), harness({ raw }).route());
    const turnId = accepted.turnId!;
    const sessionId = accepted.sessionId!;
    await raw.turns.begin(turnId, [
      { kind: 'user', turnId, payload: { content: [{ type: 'text', text: 'write' }] } },
      { kind: 'assistant', turnId, payload: { content: [{ type: 'tool_use', id: 'tu1', name: 'write_file', input: { path: 'x' } }], model: 'm' } },
      { kind: 'tool_start', turnId, payload: { toolUseId: 'tu1', name: 'write_file', input: { path: 'x' }, readOnly: false } },
    ]);
    let calls = 0;
    const write = testTool('write_file', false, async () => {
      calls++;
      return 'written';
    });
    const h = harness({ raw, tools: [write], steps: [say('checked')] });
    await h.engine.resumeAll();
    await settled(h);
    expect(calls).toBe(0);
    const sent = h.model.requests[0]?.messages.at(-1);
    expect(sent).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', is_error: true }] });
    expect((await raw.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user', 'assistant', 'tool_start', 'tool_result', 'assistant']);
    expect(RecordingChannel.end(await h.channel.nth(1))).toMatchObject({ state: 'completed', text: 'checked' });
  });
});

describe('TurnEngine: steer, abort, shutdown', () => {
  it('steer: a message of the same person joins the running turn at its next model call and its own turn ends as steered', async () => {
    const held = gate();
    const read = testTool('read_file', true, async () => 'file');
    const h = harness({
      queueMode: 'steer',
      tools: [read],
      steps: [{ content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a' } }], hold: held.promise }, say('both answered')],
    });
    const first = await h.send('m1', 'first');
    await h.model.requested(1);
    const second = await h.send('m2', 'also this');
    held.open();
    await settled(h);

    expect(h.model.requests).toHaveLength(2);
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result' }, { type: 'text', text: 'also this' }] });
    const steered = h.channel.renders.find((r) => r.turnId === second.turnId)!;
    await steered.done;
    expect(steered.events).toEqual([{ type: 'turn_end', state: 'completed', reason: 'steered', text: '' }]);
    expect(RecordingChannel.end(h.channel.renders.find((r) => r.turnId === first.turnId)!)).toMatchObject({ text: 'both answered' });
    expect(await h.raw.turns.get(second.turnId)).toMatchObject({ state: 'completed', reason: 'steered' });
    expect((await h.raw.sessions.load(first.sessionId)).map((e) => [e.seq, e.kind, e.turnId === first.turnId ? 'first' : 'second'])).toEqual([
      [1, 'user', 'first'],
      [2, 'assistant', 'first'],
      [3, 'tool_start', 'first'],
      [4, 'tool_result', 'first'],
      [5, 'user', 'second'],
      [6, 'assistant', 'first'],
    ]);
  });

  it('steer: a message with images does not join the running turn (its image blocks would be lost); it runs as its own turn', async () => {
    const held = gate();
    const read = testTool('read_file', true, async () => 'file');
    const h = harness({
      queueMode: 'steer',
      tools: [read],
      steps: [
        { content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a' } }], hold: held.promise },
        say('first done'),
        say('photo seen'),
      ],
    });
    const first = await h.send('m1', 'first');
    await h.model.requested(1);
    const photo = { ...message('m2', 'look [image at inbox/p.png]'), images: [{ path: '/nowhere/p.png', mediaType: 'image/png' as const }] };
    const res = await h.engine.accept(photo, h.route());
    held.open();
    await settled(h);
    // The first turn's second call carries no injected text; the photo's own turn made the third call.
    expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result' }] });
    expect(h.model.requests).toHaveLength(3);
    expect(await h.raw.turns.get(res.turnId!)).toMatchObject({ state: 'completed', reason: 'completed' });
    expect(RecordingChannel.end(h.channel.renders.find((r) => r.turnId === first.turnId)!)).toMatchObject({ text: 'first done' });
  });

  it('abort: a stopped turn ends interrupted, keeps the user entry and cancels its approvals', async () => {
    const held = gate();
    const h = harness({ steps: [{ content: [{ type: 'text', text: 'never' }], hold: held.promise }] });
    const { turnId, sessionId } = await h.send('m1', 'stop me');
    await h.model.requested(1);
    expect(h.engine.isRunning(sessionId)).toBe(true);
    expect(h.engine.abort(turnId)).toBe(true);
    await settled(h);
    expect(RecordingChannel.end(await h.channel.nth(1))).toMatchObject({ state: 'interrupted', reason: 'aborted' });
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'interrupted', reason: 'aborted' });
    expect((await h.raw.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user']);
    expect(h.cancelled).toEqual([turnId]);
    expect(h.afterTurn).toEqual(['aborted']);
    expect(h.engine.abort(turnId)).toBe(false);
  });

  it('shutdown suspends a running turn (no end rendered, approvals kept) and the next engine answers it once', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const held = gate();
    const first = harness({ raw, steps: [{ content: [{ type: 'text', text: 'cut off' }], hold: held.promise }] });
    const { turnId, sessionId } = await first.send('m1', 'long one');
    await first.model.requested(1);
    await first.engine.shutdown();
    const cut = await first.channel.nth(1);
    await cut.done;
    expect(cut.events.some((e) => e.type === 'turn_end')).toBe(false);
    expect(first.cancelled).toEqual([]);
    expect(await raw.turns.get(turnId)).toMatchObject({ state: 'suspended', reason: 'shutdown' });
    expect((await raw.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user']);
    expect(first.writes).toEqual(['turns.accept', 'turns.finish']);

    // A later clock: the resumed turn sends the stamp stored when it started, not a new one.
    const h = harness({ raw, steps: [say('finally')], now: () => new Date('2030-01-01T00:00:00Z') });
    await h.engine.resumeAll();
    await settled(h);
    const render = await h.channel.nth(1);
    expect(render.meta.resumed).toBe(true);
    expect(RecordingChannel.end(render)).toMatchObject({ state: 'completed', text: 'finally' });
    expect(h.model.requests[0]?.messages).toEqual([{ role: 'user', content: [TEST_STAMP, { type: 'text', text: 'long one' }] }]);
    expect((await raw.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user', 'assistant']);
  });

  it('a UserPromptSubmit refusal: the turn begins durably before the hook, fails as hook_stopped, no model call', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    let stored: string[] = [];
    const h = harness({
      raw,
      policy: (ctx, base) => ({
        ...base,
        beforeTurn: async () => {
          stored = (await raw.sessions.loadTurn(ctx.turn.id)).map((e) => e.kind);
          return 'Your message was not processed: no.';
        },
      }),
    });
    const { turnId } = await h.send('m1', 'hi');
    await settled(h);
    expect(stored).toEqual(['user']);
    expect(RecordingChannel.end(await h.channel.nth(1))).toMatchObject({
      state: 'failed',
      reason: 'hook_stopped',
      error: 'Your message was not processed: no.',
    });
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'failed', reason: 'hook_stopped' });
    expect(h.model.requests).toHaveLength(0);
    expect(h.afterTurn).toEqual(['hook_stopped']);
    expect(h.writes).toEqual(['turns.accept', 'turns.begin', 'turns.finish']);
  });
});
