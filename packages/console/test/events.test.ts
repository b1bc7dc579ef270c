import { describe, expect, it } from 'vitest';
import { createEventHub, EVENT_TYPES, parseEventData } from '../src/events';
import { statsOf } from '../src/types';

class FakeSource {
  static last: FakeSource | null = null;
  readyState = 0;
  url: string;
  listeners = new Map<string, (e: { data: unknown }) => void>();
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  constructor(url: string) {
    this.url = url;
    FakeSource.last = this;
  }
  addEventListener(type: string, fn: (e: { data: unknown }) => void) {
    this.listeners.set(type, fn);
  }
  close() {
    this.closed = true;
  }
}

describe('live events', () => {
  it('parses only JSON objects', () => {
    expect(parseEventData('{"a":1}')).toEqual({ a: 1 });
    expect(parseEventData('[1]')).toBeNull();
    expect(parseEventData('nope')).toBeNull();
    expect(parseEventData(undefined)).toBeNull();
  });

  it('opens one stream on /api/v1/events and fans events out to subscribers', () => {
    const hub = createEventHub();
    const states: string[] = [];
    hub.onState((s) => states.push(s));
    hub.open(FakeSource as unknown as typeof EventSource);
    hub.open(FakeSource as unknown as typeof EventSource);
    const src = FakeSource.last!;
    expect(src.url).toBe('/api/v1/events');
    expect([...src.listeners.keys()].sort()).toEqual([...EVENT_TYPES].sort());
    src.onopen?.();
    const got: unknown[] = [];
    const off = hub.on('approval.requested', (d) => got.push(d));
    src.listeners.get('approval.requested')?.({ data: '{"id":"a1"}' });
    src.listeners.get('approval.requested')?.({ data: 'not json' });
    src.listeners.get('pairing.requested')?.({ data: '{"code":"X"}' });
    off();
    src.listeners.get('approval.requested')?.({ data: '{"id":"a2"}' });
    expect(got).toEqual([{ id: 'a1' }]);
    hub.close();
    expect(src.closed).toBe(true);
    expect(states).toEqual(['closed', 'connecting', 'live', 'closed']);
  });

  it('reads the stats event in both shapes', () => {
    expect(statsOf({ turnsPerMinute: 3, modelLatencyMs: { p50: 100, p95: 900 }, modelErrors: 0, pendingApprovals: 2, pendingPairing: 1 })).toEqual({
      turnsPerMinute: 3,
      latencyP50Ms: 100,
      latencyP95Ms: 900,
      modelErrors: 0,
      pendingApprovals: 2,
      pendingPairing: 1,
    });
    expect(statsOf({ latencyP50Ms: 5 })).toMatchObject({ latencyP50Ms: 5, turnsPerMinute: null });
    expect(statsOf({ turnsPerMinute: '3', modelLatencyMs: null })).toBeNull();
  });
});
