import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChatSocket, ownSocketUrl } from '../src/chat/chat-socket';

// The chat socket's life: cookie auth at the upgrade (no token anywhere), a `hello` with the
// cursor after every open, backoff between tries, and no retry after a policy close.

class FakeWs {
  static OPEN = 1;
  static all: FakeWs[] = [];
  readyState = 0;
  sent: string[] = [];
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  constructor(readonly url: string) {
    FakeWs.all.push(this);
  }
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.readyState = 3;
  }
  open(principalId = 'p1') {
    this.readyState = 1;
    this.onmessage?.({ data: JSON.stringify({ type: 'hello_ok', principalId, cursor: 0 }) });
  }
  drop(code = 1006, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

describe('ChatSocket', () => {
  let events: { frames: unknown[]; status: string[]; reconnected: number; checks: number; cursor: number };
  const make = () =>
    new ChatSocket(
      {
        onFrame: (f) => events.frames.push(f),
        onStatus: (s, r) => events.status.push(r ? `${s}:${r}` : s),
        cursor: () => events.cursor,
        onReconnected: () => events.reconnected++,
        checkSession: () => events.checks++,
      },
      { url: 'ws://127.0.0.1:1/ws', minDelayMs: 500, maxDelayMs: 2000, WebSocketImpl: FakeWs as unknown as typeof WebSocket },
    );
  beforeEach(() => {
    vi.useFakeTimers();
    FakeWs.all = [];
    events = { frames: [], status: [], reconnected: 0, checks: 0, cursor: 0 };
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the URL is this origin's /ws: no token, no query, wss under https", () => {
    expect(ownSocketUrl({ protocol: 'http:', host: '127.0.0.1:8080' })).toBe('ws://127.0.0.1:8080/ws');
    expect(ownSocketUrl({ protocol: 'https:', host: 'gw.example' })).toBe('wss://gw.example/ws');
  });

  it('sends hello with the cursor after each open; reconnects with doubling delays; refetches after a reconnect', () => {
    const s = make();
    s.start();
    FakeWs.all[0]?.open();
    expect(FakeWs.all[0]?.sent).toEqual(['{"type":"hello","cursor":0}']);
    expect(events.status).toEqual(['connecting', 'open']);
    events.cursor = 42;
    FakeWs.all[0]?.drop();
    expect(FakeWs.all).toHaveLength(1);
    vi.advanceTimersByTime(500);
    expect(FakeWs.all).toHaveLength(2);
    // The gateway is away: the upgrade fails; the session is checked and the next try waits longer.
    FakeWs.all[1]?.drop();
    expect(events.checks).toBe(1);
    vi.advanceTimersByTime(999);
    expect(FakeWs.all).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeWs.all).toHaveLength(3);
    FakeWs.all[2]?.open();
    expect(FakeWs.all[2]?.sent).toEqual(['{"type":"hello","cursor":42}']);
    expect(events.reconnected).toBe(1);
    expect(s.send({ type: 'message', clientId: 'c', text: 'x' })).toBe(true);
    s.stop();
    expect(s.send({ type: 'message', clientId: 'c', text: 'y' })).toBe(false);
  });

  it('a policy close (signed out, token revoked) stops for good and checks the session', () => {
    const s = make();
    s.start();
    FakeWs.all[0]?.open();
    FakeWs.all[0]?.drop(1008, 'token revoked');
    expect(events.status.at(-1)).toBe('closed:token revoked');
    expect(events.checks).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(FakeWs.all).toHaveLength(1);
    s.stop();
  });

  it('drops frames that are not whole frames; passes the rest on', () => {
    const s = make();
    s.start();
    const ws = FakeWs.all[0];
    ws?.open();
    ws?.onmessage?.({ data: 'not json' });
    ws?.onmessage?.({ data: new ArrayBuffer(2) });
    ws?.onmessage?.({ data: '{"type":"notice","text":"hi"}' });
    expect(events.frames).toEqual([{ type: 'notice', text: 'hi' }]);
    s.stop();
  });
});
