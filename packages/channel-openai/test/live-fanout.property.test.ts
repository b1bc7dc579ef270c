import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { relayFrameFor, relayFrameOf } from '../src/live-fanout.js';

// Frames relayed between replicas for a waiting request are read back from the shared database:
// anything but a well-formed frame is dropped (null), never thrown on.

describe('relayed OpenAI frames', () => {
  it('round-trips the frames a render relays', () => {
    const events = [
      { type: 'text_delta', text: 'hi' },
      { type: 'attempt_reset', reason: 'retry' },
      { type: 'approval_requested', approvalId: 'ap', toolUseId: 't', name: 'write_file', summary: 's', expiresAt: 'e' },
      { type: 'approval_resolved', approvalId: 'ap', toolUseId: 't', allowed: true, by: 'operator:x' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 }, model: 'm' },
    ] as const;
    for (const ev of events) {
      const f = relayFrameFor(ev as never);
      expect(f).not.toBeNull();
      expect(relayFrameOf(JSON.parse(JSON.stringify(f)))).toEqual(f);
    }
    expect(relayFrameFor({ type: 'tool_start', toolUseId: 't', name: 'n', input: {}, readOnly: true })).toBeNull();
  });

  it('refuses hostile shapes without throwing', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'k', 'text', 'turnId')), fc.anything()),
          fc.record({ k: fc.constantFrom('text', 'usage', 'end', 'notice', 'nope'), text: fc.anything(), input: fc.anything(), turnId: fc.anything() }),
        ),
        (v) => {
          const f = relayFrameOf(v);
          if (f !== null) expect(['text', 'reset', 'said', 'usage', 'approval_requested', 'approval_resolved', 'end', 'notice']).toContain(f.k);
        },
      ),
    );
    expect(relayFrameOf({ k: 'usage', input: -1, output: 0, cacheRead: 0, cacheWrite: 0 })).toBeNull();
    expect(relayFrameOf({ k: 'end', turnId: 't', conversationId: 'c', extra: 1 })).toBeNull();
    expect(relayFrameOf(JSON.parse('{"__proto__":{"k":"text"},"text":"x"}'))).toBeNull();
  });
});
