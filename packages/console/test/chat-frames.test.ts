import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { currentChatSession, entryText, parseFrame, parseTranscript } from '../src/chat/chat-frames';

// The web chat reads frames and transcripts from the gateway: whatever arrives, it either reads a
// whole frame or drops it (null), and never throws.

const hostile = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.constant('__proto__'),
  fc.constant({ __proto__: { polluted: true } }),
  fc.constant('x'.repeat(200_000)),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
);
const TYPES = [
  'hello_ok',
  'accepted',
  'delta',
  'attempt_reset',
  'tool',
  'final',
  'error',
  'approval_request',
  'approval_resolved',
  'approval_result',
  'notice',
  'usage',
  'compacted',
  'context',
  'command_result',
  'session_reset',
  'nope',
  '__proto__',
];

describe('parseFrame', () => {
  it('reads the frames of docs/protocol.md', () => {
    expect(parseFrame('{"type":"final","turnId":"t1","clientId":"c1","text":"hi","reason":"completed","cursor":7}')).toEqual({
      type: 'final',
      turnId: 't1',
      clientId: 'c1',
      text: 'hi',
      reason: 'completed',
      cursor: 7,
    });
    expect(parseFrame('{"type":"delta","turnId":"t1","clientId":null,"text":"h"}')).toEqual({ type: 'delta', turnId: 't1', clientId: null, text: 'h' });
    expect(
      parseFrame(
        '{"type":"approval_request","approvalId":"a1","turnId":"t1","clientId":"c","tool":"write_file","summary":"s","expiresAt":"x","source":"mode"}',
      ),
    ).toMatchObject({
      type: 'approval_request',
      approvalId: 'a1',
      choices: null,
    });
    expect(parseFrame('{"type":"usage","outcome":"spend","usage":{"periods":[]}}')).toMatchObject({ type: 'command', name: 'usage', outcome: 'spend' });
    expect(parseFrame('{"type":"command_result","command":"status","outcome":"status"}')).toMatchObject({ type: 'command', name: 'status' });
  });

  it('drops frames with a missing or wrong field instead of half-reading them', () => {
    expect(parseFrame('not json')).toBeNull();
    expect(parseFrame('[]')).toBeNull();
    expect(parseFrame('{"type":"final","turnId":"t1","text":"hi","cursor":-1}')).toBeNull();
    expect(parseFrame('{"type":"final","turnId":"t1","text":"hi","cursor":1.5}')).toBeNull();
    expect(parseFrame('{"type":"delta","turnId":"","text":"x"}')).toBeNull();
    expect(parseFrame('{"type":"tool","turnId":"t","name":"x","toolUseId":"u","phase":"explode"}')).toBeNull();
    expect(parseFrame('{"type":"__proto__"}')).toBeNull();
  });

  it('never throws, whatever the fields hold', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TYPES),
        fc.dictionary(
          fc.constantFrom(
            'turnId',
            'clientId',
            'text',
            'cursor',
            'approvalId',
            'tool',
            'summary',
            'choices',
            'outcome',
            'phase',
            'name',
            'toolUseId',
            'code',
            'message',
            'principalId',
            '__proto__',
          ),
          hostile,
        ),
        (type, fields) => {
          const f = parseFrame(JSON.stringify({ ...fields, type }));
          if (f !== null) expect(typeof f.type).toBe('string');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('parseTranscript and currentChatSession', () => {
  it('keep only well-formed entries and the newest open web chat session', () => {
    expect(
      parseTranscript({
        entries: [
          { seq: 1, kind: 'user', turnId: 't1', payload: { content: [{ type: 'text', text: 'hi' }] } },
          { seq: 'x', kind: 'user' },
          null,
          { seq: 2, kind: 'assistant', turnId: 5, payload: {} },
        ],
      }),
    ).toEqual([{ seq: 1, kind: 'user', turnId: 't1', payload: { content: [{ type: 'text', text: 'hi' }] } }]);
    expect(entryText({ content: [{ type: 'text', text: 'a' }, { type: 'tool_use' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    expect(entryText('<script>')).toBe('');
    const s = (id: string, updatedAt: string, extra: Record<string, unknown> = {}) => ({
      id,
      channel: 'websocket',
      account: 'default',
      endedAt: null,
      updatedAt,
      ...extra,
    });
    expect(
      currentChatSession({
        sessions: [
          s('old', '2026-01-01T00:00:00Z'),
          s('new', '2026-02-01T00:00:00Z'),
          s('ended', '2026-03-01T00:00:00Z', { endedAt: '2026-03-02T00:00:00Z' }),
          s('tg', '2026-04-01T00:00:00Z', { channel: 'telegram' }),
        ],
      })?.id,
    ).toBe('new');
    fc.assert(
      fc.property(hostile, (body) => {
        expect(Array.isArray(parseTranscript(body))).toBe(true);
        currentChatSession(body);
        currentChatSession({ sessions: body });
        parseTranscript({ entries: [body] });
      }),
      { numRuns: 200 },
    );
  });
});
