import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replicaFrame } from '../src/websocket-channel.js';

// Frames another replica staged in the database are outside input here: only the kinds of frame
// a turn's render broadcasts pass, with the fields the channel relies on.

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'then'];

describe('frames from another replica', () => {
  it('passes the frames render broadcasts', () => {
    for (const f of [
      { type: 'delta', turnId: 't', clientId: 'c', text: 'hi' },
      { type: 'final', turnId: 't', clientId: 'c', text: 'done', reason: 'completed', cursor: 3 },
      { type: 'approval_request', approvalId: 'a', turnId: 't' },
      { type: 'approval_resolved', approvalId: 'a', turnId: 't', allowed: true, by: 'x' },
      { type: 'notice', text: 'n' },
    ]) {
      expect(replicaFrame(f)).toBe(f);
    }
  });

  it('refuses what render never broadcasts, and hostile shapes, without throwing', () => {
    const hostile = fc.oneof(
      fc.anything(),
      fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...PROTO_KEYS, 'type', 'approvalId', 'cursor')), fc.anything()),
      fc.record({
        type: fc.constantFrom('final', 'error', 'approval_request', 'approval_resolved', 'hello_ok', 'file', 'accepted'),
        approvalId: fc.anything(),
        cursor: fc.anything(),
      }),
    );
    fc.assert(
      fc.property(hostile, (v) => {
        const f = replicaFrame(v);
        if (f === null) return;
        expect(['delta', 'attempt_reset', 'tool', 'approval_request', 'approval_resolved', 'final', 'error', 'notice']).toContain(f.type);
        if (f.type === 'approval_request' || f.type === 'approval_resolved') expect(typeof f.approvalId).toBe('string');
        if ((f.type === 'final' || f.type === 'error') && f.cursor !== undefined) expect(typeof f.cursor).toBe('number');
      }),
    );
    // A socket must never be handed a frame that would authenticate it or offer a file of another process.
    expect(replicaFrame({ type: 'hello_ok', principalId: 'someone-else' })).toBeNull();
    expect(replicaFrame({ type: 'file', url: '/files/x' })).toBeNull();
    expect(replicaFrame({ type: 'approval_request' })).toBeNull();
    expect(replicaFrame({ type: 'final', cursor: '7' })).toBeNull();
  });
});
