import { defaultModelSpec, type Message, MIN_CLEARED_CHARS, TokenEstimator } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { contextMeter } from '../../src/context/meter.js';
import { clearedSince, type MicrocompactPayload, microcompactShaper } from '../../src/context/microcompact-shaper.js';
import type { NewEntry } from '../../src/storage.js';

const signal = new AbortController().signal;
const info = { call: 0, model: 'm', signal };
// W = 10,000 tokens at 4 characters a token: the threshold 0.5 is 20,000 characters.
const meter = contextMeter({ ...defaultModelSpec('m'), contextWindow: 11_000, outputReserve: 1_000 }, new TokenEstimator(4), [], []);
const settings = { threshold: 0.5, keepTurns: 1 };

/** One turn: a person's message, one tool call and its result of `chars` characters, a reply. */
function turn(n: number, chars: number): Message[] {
  const id = `toolu_${n}`;
  return [
    { role: 'user', content: [{ type: 'text', text: `message ${n}` }] },
    { role: 'assistant', content: [{ type: 'tool_use', id, name: 't', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: String(n % 10).repeat(chars) }] },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
}
const session = (turns: number, chars: number) => Array.from({ length: turns }, (_, i) => turn(i, chars)).flat();

function shaper(cleared: Iterable<string> = [], fail = false) {
  const markers: MicrocompactPayload[] = [];
  const s = microcompactShaper({
    meter,
    settings,
    cleared: new Set(cleared),
    record: async (marker) => {
      if (fail) throw new Error('disk full');
      markers.push(marker);
    },
  });
  const send = async (messages: Message[]) => (await s.shape(messages, messages, info)).send;
  return { markers, send };
}

describe('microcompact as a shaper', () => {
  it('below the threshold sends the messages as they are, and records nothing', async () => {
    const { markers, send } = shaper();
    const messages = session(3, 1000);
    expect(await send(messages)).toEqual(messages);
    expect(markers).toEqual([]);
  });

  it('at a crossing clears every result older than the last K turns at once and records one marker', async () => {
    const { markers, send } = shaper();
    const messages = session(5, 5000); // ~25,000 characters: past 0.5·W
    const view = await send(messages);
    expect(markers).toHaveLength(1);
    expect(markers[0]!.cleared).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3']);
    expect(markers[0]!.tokensBefore).toBeGreaterThan(5000);
    expect(markers[0]!.tokensAfter).toBeLessThan(2000);
    expect(meter.estimate(view)).toBe(markers[0]!.tokensAfter);
    const last = view.at(-2)!.content[0]!;
    expect(last).toMatchObject({ tool_use_id: 'toolu_4', content: '4'.repeat(5000) });
  });

  it('is sticky: between crossings the view of the older messages is byte-identical, call after call', async () => {
    const { markers, send } = shaper();
    let messages = session(5, 5000);
    const first = JSON.stringify(await send(messages));
    // The conversation grows by small turns: no new crossing, the earlier view never changes.
    const views: string[] = [];
    for (let n = 5; n < 9; n++) {
      messages = [...messages, ...turn(n, MIN_CLEARED_CHARS * 2)];
      const view = await send(messages);
      views.push(JSON.stringify(view.slice(0, 20)));
    }
    expect(markers).toHaveLength(1);
    for (const view of views) expect(view).toBe(JSON.stringify(JSON.parse(first).slice(0, 20)));
    // Results of turns after the cut stay whole, even once they are older than K.
    expect(JSON.stringify(await send(messages))).toContain('5'.repeat(MIN_CLEARED_CHARS * 2));
  });

  it('crosses again only when the pressure is back, then clears the rest older than K', async () => {
    const { markers, send } = shaper();
    let messages = session(5, 5000);
    await send(messages);
    messages = [...messages, ...turn(5, 12_000), ...turn(6, 12_000)];
    await send(messages);
    expect(markers.map((m) => m.cleared)).toEqual([
      ['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3'],
      ['toolu_4', 'toolu_5'],
    ]);
  });

  it('starts from the cleared set loaded at turn start (a restart sees the same view)', async () => {
    const messages = session(5, 5000);
    const before = shaper();
    const view = await before.send(messages);
    const after = shaper(before.markers.flatMap((m) => m.cleared));
    expect(JSON.stringify(await after.send(messages))).toBe(JSON.stringify(view));
    expect(after.markers).toEqual([]);
  });

  it('a marker that cannot be recorded cancels its cut: the view stays as it was', async () => {
    const { markers, send } = shaper([], true);
    const messages = session(5, 5000);
    expect(await send(messages)).toEqual(messages);
    expect(markers).toEqual([]);
  });
});

describe('clearedSince', () => {
  const marker = (cleared: unknown): NewEntry => ({ kind: 'microcompact', turnId: 't', payload: { cleared, tokensBefore: 1, tokensAfter: 1 } });
  it('unions the markers after the last compact boundary, skipping malformed ones', () => {
    const entries: NewEntry[] = [
      marker(['old']),
      { kind: 'compact', turnId: 't', payload: { summary: 's', throughSeq: 1 } },
      marker(['a', 'b']),
      { kind: 'note', turnId: null, payload: null },
      marker(['b', 'c', 7]),
      marker('nope'),
      { kind: 'microcompact', turnId: 't', payload: null },
      { kind: 'microcompact', turnId: 't', payload: Object.create(null) },
      { kind: 'microcompact', turnId: 't', payload: JSON.parse('{"__proto__": {"cleared": ["x"]}}') },
    ];
    expect([...clearedSince(entries)]).toEqual(['a', 'b', 'c']);
    expect([...clearedSince(entries.slice(0, 1))]).toEqual(['old']);
    expect(clearedSince([]).size).toBe(0);
  });

  it('a malformed compact entry is not a boundary: it does not reset the set (the view ignores it too)', () => {
    const entries: NewEntry[] = [marker(['kept']), { kind: 'compact', turnId: 't', payload: { summary: 42 } }, marker(['later'])];
    expect([...clearedSince(entries)]).toEqual(['kept', 'later']);
  });
});

describe('microcompact leaves small cuts alone (minGain)', () => {
  it('a crossing whose cut frees less than minGain·W sends the view unchanged and records nothing; a bigger one cuts', async () => {
    const markers: MicrocompactPayload[] = [];
    const s = microcompactShaper({
      meter,
      settings: { threshold: 0.5, keepTurns: 1, minGain: 0.2 },
      cleared: new Set(),
      record: async (marker) => {
        markers.push(marker);
      },
    });
    // Past 0.5·W mostly with conversation: one old 1,000-character result frees ~250 tokens, under 0.2·W = 2,000.
    const talk: Message = { role: 'user', content: [{ type: 'text', text: 'x'.repeat(22_000) }] };
    const small = [talk, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] } as Message, ...session(2, 1000)];
    const unchanged = (await s.shape(small, small, info)).send;
    expect(unchanged).toEqual(small);
    expect(markers).toEqual([]);
    // Old results worth ~10,000 characters (2,500 tokens) clear at once.
    const big = [talk, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] } as Message, ...session(3, 5000)];
    const view = (await s.shape(big, big, info)).send;
    expect(markers).toHaveLength(1);
    expect(markers[0]!.tokensBefore - markers[0]!.tokensAfter).toBeGreaterThanOrEqual(2_000);
    expect(view).not.toEqual(big);
  });
});
