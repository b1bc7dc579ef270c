import { defaultModelSpec, type Message, ModelError, SUMMARY_PREFIX, SUMMARY_REQUEST_MARKER, TokenEstimator } from '@switchboard/agent';
import { ScriptedModel } from '@switchboard/testkit';
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Entry, NewEntry, Storage } from '../src/index.js';
import { CompactionBreaker } from '../src/context/compaction-breaker.js';
import { type CompactionContext, DEFAULT_COMPACTION } from '../src/context/compaction-run.js';
import { compactionShaper } from '../src/context/compaction-shaper.js';
import { contextMeter } from '../src/context/meter.js';
import { TranscriptCache } from '../src/transcript-cache.js';
import { rebuildMessages } from '../src/transcript.js';

const log = pino({ level: 'silent' });
const signal = new AbortController().signal;
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

/** A session of `turns` stored turns (user then assistant entry each), numbered from seq 1. */
function storedTurns(turns: number, size = 200): Entry[] {
  const entries: Entry[] = [];
  for (let t = 1; t <= turns; t++) {
    const base = { sessionId: 's1', turnId: `t${t}`, createdAt: new Date() };
    entries.push({ ...base, seq: entries.length + 1, kind: 'user', payload: { content: [{ type: 'text', text: `question ${t} ${'q'.repeat(size)}` }] } });
    entries.push({ ...base, seq: entries.length + 1, kind: 'assistant', payload: { content: [{ type: 'text', text: `answer ${t}` }], model: 'm' } });
  }
  return entries;
}

/** An in-memory session the compaction reads and appends to, with what the person was told. */
function harness(entries: Entry[], model: ScriptedModel, opts: { window?: number; maxReactivePerHour?: number } = {}) {
  const notices: string[] = [];
  const calls: string[] = [];
  const spec = { ...defaultModelSpec('m'), contextWindow: (opts.window ?? 4_000) + 1_000, outputReserve: 1_000 };
  const meter = contextMeter(spec, new TokenEstimator(4), [], []);
  const context: CompactionContext = {
    settings: { ...DEFAULT_COMPACTION, maxReactivePerHour: opts.maxReactivePerHour ?? 3 },
    model,
    summaryModel: 'summary-model',
    window: meter.window,
    summaryContextWindow: spec.contextWindow,
    estimate: (messages) => meter.estimate(messages),
    writer: {
      transcript: async () => [...entries],
      append: async (entry: NewEntry) => {
        entries.push({ ...entry, sessionId: 's1', seq: entries.length + 1, createdAt: new Date() });
      },
    },
    turnId: 'now',
    recordCall: (_usage, m) => void calls.push(m),
    notify: async (t) => void notices.push(t),
    log,
  };
  const breaker = new CompactionBreaker(opts.maxReactivePerHour ?? 3);
  const shaper = compactionShaper({ context, meter, breaker, sessionId: 's1' });
  const history = () => rebuildMessages(entries).messages;
  return { shaper, notices, calls, meter, breaker, history };
}

const summaryCalls = (model: ScriptedModel) =>
  model.requests.filter((r) => (r.messages[0]?.content[0] as { text?: string })?.text?.startsWith(SUMMARY_REQUEST_MARKER));

describe('the circuit breaker of reactive compaction', () => {
  it('allows maxPerHour per session in a rolling hour, per session, and forgets sessions an hour later', () => {
    let now = 0;
    const breaker = new CompactionBreaker(2, () => now);
    expect([breaker.tryAcquire('a'), breaker.tryAcquire('a'), breaker.tryAcquire('a')]).toEqual([true, true, false]);
    expect(breaker.tryAcquire('b')).toBe(true);
    now = 3_599_999;
    expect(breaker.tryAcquire('a')).toBe(false);
    now = 3_600_000;
    expect(breaker.count('a')).toBe(0);
    expect(breaker.tryAcquire('a')).toBe(true);
    now = 7_300_000;
    expect(breaker.count('a') + breaker.count('b')).toBe(0);
    expect(breaker.size).toBe(0);
  });

  it('with 0 per hour never allows one', () => {
    expect(new CompactionBreaker(0).tryAcquire('a')).toBe(false);
  });
});

describe('the auto-compact shaper', () => {
  it('leaves a request under the threshold alone and makes no model call', async () => {
    const model = new ScriptedModel([]);
    const h = harness(storedTurns(3), model);
    const history = h.history();
    const shaped = await h.shaper.shape(history, history, { call: 0, model: 'm', signal });
    expect(shaped).toEqual({ send: history });
    expect(model.requests).toEqual([]);
  });

  it('past the threshold: summarizes all but the last 2 turns, appends the boundary after the cut, tells the person, records the call', async () => {
    const entries = storedTurns(12, 1_000);
    const model = new ScriptedModel([text('the summary')]);
    const h = harness(entries, model);
    const history = h.history();
    expect(h.meter.estimate(history)).toBeGreaterThan(0.65 * h.meter.window);
    const shaped = await h.shaper.shape(history, history, { call: 0, model: 'm', signal });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({ model: 'summary-model', tools: [], maxTokens: DEFAULT_COMPACTION.summaryMaxTokens });
    expect(shaped.history).toBeDefined();
    expect(shaped.history![0]!.content[0]).toEqual({ type: 'text', text: `${SUMMARY_PREFIX}\n\nthe summary` });
    expect(shaped.history).toHaveLength(4); // summary + turn 11, answer, turn 12, answer
    const boundary = entries.at(-1)!;
    // Turns 1–10 are summarized: through the answer of turn 10 (seq 20).
    expect(boundary).toMatchObject({
      kind: 'compact',
      turnId: 'now',
      payload: { summary: 'the summary', throughSeq: 20, trigger: 'auto', model: 'summary-model' },
    });
    // The stored session rebuilds to the same view.
    expect(rebuildMessages(entries).messages).toEqual(shaped.history);
    expect(h.notices).toHaveLength(1);
    expect(h.calls).toEqual(['summary-model']);
  });

  it('a failing summary leaves the request as it was, the transcript untouched, and is not tried again in the turn', async () => {
    const entries = storedTurns(12, 1_000);
    const model = new ScriptedModel([{ error: new ModelError('server', 'boom') }]);
    const h = harness(entries, model);
    const history = h.history();
    const before = entries.length;
    expect(await h.shaper.shape(history, history, { call: 0, model: 'm', signal })).toEqual({ send: history });
    expect(await h.shaper.shape(history, history, { call: 1, model: 'm', signal })).toEqual({ send: history });
    expect(model.requests).toHaveLength(1);
    expect(entries).toHaveLength(before);
    // After a failed summary, prompt_too_long drops turns without a second summary call.
    const recovered = await h.shaper.recover!(history, history, { call: 1, model: 'm', signal, attempt: 0 });
    expect(model.requests).toHaveLength(1);
    expect(recovered?.history?.[0]?.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('earlier turns were dropped') });
    expect(entries.at(-1)).toMatchObject({ kind: 'compact', payload: { trigger: 'reactive', dropped: expect.any(Number) } });
  });
});

describe('a summary that saves nothing', () => {
  it('writes no boundary, sends the request as it was, and is not asked for again in the turn', async () => {
    // Past 0.65·W (2,600 tokens): one 6,000-character turn before the cut and two kept turns of
    // 2,400 characters; the summary the model writes (8,000 characters) is longer than the turn it replaces.
    const entries = [...storedTurns(1, 6_000), ...storedTurns(2, 2_400).map((e) => ({ ...e, seq: e.seq + 2, turnId: `k${e.turnId}` }))];
    const model = new ScriptedModel([text('S'.repeat(8_000))]);
    const h = harness(entries, model);
    const history = h.history();
    const before = entries.length;
    expect(await h.shaper.shape(history, history, { call: 0, model: 'm', signal })).toEqual({ send: history });
    expect(await h.shaper.shape(history, history, { call: 1, model: 'm', signal })).toEqual({ send: history });
    expect(summaryCalls(model)).toHaveLength(1);
    expect(entries).toHaveLength(before);
    expect(h.notices).toEqual([]);
  });
});

describe('reactive compaction (recover)', () => {
  it('one reactive compaction per turn, then one drop per call, then null: no loop', async () => {
    const entries = storedTurns(6);
    const model = new ScriptedModel([text('S1'), text('S2')]);
    const h = harness(entries, model);
    let history: Message[] = h.history();
    const first = await h.shaper.recover!(history, history, { call: 0, model: 'm', signal, attempt: 0 });
    expect(first?.history?.[0]?.content[0]).toEqual({ type: 'text', text: `${SUMMARY_PREFIX}\n\nS1` });
    expect(entries.at(-1)).toMatchObject({ kind: 'compact', payload: { trigger: 'reactive', summary: 'S1' } });
    history = first!.history!;
    const second = await h.shaper.recover!(history, history, { call: 0, model: 'm', signal, attempt: 1 });
    expect(second?.history).toBeDefined();
    expect(entries.at(-1)).toMatchObject({ kind: 'compact', payload: { trigger: 'reactive', dropped: 1, summary: expect.stringContaining('S1') } });
    history = second!.history!;
    expect(await h.shaper.recover!(history, history, { call: 0, model: 'm', signal, attempt: 2 })).toBeNull();
    expect(summaryCalls(model)).toHaveLength(1);
  });

  it('an open breaker skips the summary call and drops turns instead', async () => {
    const entries = storedTurns(6);
    const model = new ScriptedModel([]);
    const h = harness(entries, model, { maxReactivePerHour: 0 });
    const history = h.history();
    const shaped = await h.shaper.recover!(history, history, { call: 0, model: 'm', signal, attempt: 0 });
    expect(model.requests).toEqual([]);
    expect(shaped?.history).toBeDefined();
    expect(entries.at(-1)).toMatchObject({ kind: 'compact', payload: { dropped: expect.any(Number) } });
  });
});

describe('loading from the last boundary', () => {
  it('a compact entry with a hostile payload is not a boundary and never throws', () => {
    fc.assert(
      fc.property(fc.anything(), (payload) => {
        const entries: NewEntry[] = [...storedTurns(2), { kind: 'compact', turnId: null, payload }];
        const valid = typeof (payload as { summary?: unknown })?.summary === 'string' && Number.isFinite((payload as { throughSeq?: unknown })?.throughSeq);
        const { messages } = rebuildMessages(entries);
        if (!valid) expect(messages).toEqual(rebuildMessages(storedTurns(2)).messages);
      }),
    );
    for (const payload of [
      null,
      'x',
      7,
      [],
      { summary: 1, throughSeq: 2 },
      { summary: 's', throughSeq: '2' },
      JSON.parse('{"__proto__": {"summary": "s", "throughSeq": 1}}'),
    ]) {
      expect(rebuildMessages([...storedTurns(2), { kind: 'compact', turnId: null, payload }]).messages).toHaveLength(4);
    }
  });

  it('rebuilds the summary then the entries after throughSeq, boundary entries left out', () => {
    const entries: NewEntry[] = [...storedTurns(3)];
    entries.push({ kind: 'compact', turnId: 't3', payload: { summary: 'S', throughSeq: 2, trigger: 'auto', tokensBefore: 1, tokensAfter: 1, model: 'm' } });
    const { messages } = rebuildMessages(entries);
    expect(messages).toHaveLength(4);
    expect(messages[0]!.content[0]).toEqual({ type: 'text', text: `${SUMMARY_PREFIX}\n\nS` });
    expect(JSON.stringify(messages)).not.toContain('question 1');
    expect(JSON.stringify(messages)).toContain('question 2');
  });

  it('the transcript cache drops what a boundary summarized (keeping the boundary turn’s own entries)', async () => {
    const data: Entry[] = storedTurns(4);
    const storage = {
      sessions: {
        load: async () => [...data],
        append: async (_id: string, entries: NewEntry[]) => {
          const stored = entries.map((e, i) => ({ ...e, sessionId: 's1', seq: data.length + i + 1, createdAt: new Date() }));
          data.push(...stored);
          return stored;
        },
      },
    } as unknown as Storage;
    const cache = new TranscriptCache(storage, 10);
    expect(await cache.get('s1')).toHaveLength(8);
    await cache.append('s1', [{ kind: 'compact', turnId: 't1', payload: { summary: 'S', throughSeq: 6 } }]);
    const kept = await cache.get('s1');
    expect(kept.map((e) => e.seq)).toEqual([1, 2, 7, 8, 9]);
    expect(cache.size().entries).toBe(5);
    // A cold load without loadFromBoundary drops the same.
    const cold = new TranscriptCache(storage, 10);
    expect((await cold.get('s1')).map((e) => e.seq)).toEqual([1, 2, 7, 8, 9]);
  });
});
