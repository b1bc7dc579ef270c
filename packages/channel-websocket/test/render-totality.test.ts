import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  ChatCommands,
  DeliveryLedger,
  type ChannelContext,
  type ChannelPeople,
  type DeliveryRecord,
  type DeliveryStore,
  type TurnEvent,
} from '@switchboard/core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { WebsocketUpgrades } from '../src/upgrades.js';
import { WebsocketChannel } from '../src/websocket-channel.js';

/** Just enough of a `ws` socket for the channel: frames sent are kept; `failSend` makes send throw. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  readonly frames: Array<{ type: string; [k: string]: unknown }> = [];
  constructor(private readonly failSend = false) {
    super();
  }
  send(data: string): void {
    if (this.failSend) throw new Error('send on a broken socket');
    this.frames.push(JSON.parse(data));
  }
  close(): void {
    this.readyState = 3;
    this.emit('close');
  }
}

const unused = async (): Promise<never> => {
  throw new Error('not used by render');
};

/** A context over an in-memory ledger whose writes can be made to fail; logs go to `lines`. */
function fakeContext(opts: { failRecord?: boolean } = {}) {
  const rows: DeliveryRecord[] = [];
  const lines: Array<{ msg: string; level: number }> = [];
  const out = new PassThrough();
  out.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  const store: DeliveryStore = {
    record: async (d) => {
      if (opts.failRecord) throw new Error('SQLITE_BUSY: database is locked');
      const found = rows.find((r) => r.turnId === d.turnId && r.part === d.part && r.kind === d.kind);
      if (found) return { record: found, existed: true };
      const record = { ...d, id: rows.length + 1, createdAt: new Date() };
      rows.push(record);
      return { record, existed: false };
    },
    ofTurn: async (turnId) => rows.filter((r) => r.turnId === turnId),
    finalsSince: async () => [],
  };
  const people: ChannelPeople = {
    principalFor: unused,
    updateSession: unused,
    resetSession: unused,
    sessionStatus: unused,
    contextReport: unused,
    setMode: unused,
    stopRunning: unused,
    abortTurn: unused,
  };
  const ctx: ChannelContext = {
    inbox: { accept: unused, maxAttempts: 5, deadLetter: unused, accepting: () => true, cursors: { get: unused, set: unused } },
    ledger: new DeliveryLedger(store, { channel: 'websocket', account: 'default' }),
    people,
    approvals: { pending: async () => [], decide: unused },
    commands: new ChatCommands(people),
    clientAuth: { verify: unused, addressOf: () => '127.0.0.1', tokenActive: async () => true, onAccessChange: () => () => undefined },
    http: { register: async () => undefined },
    log: pino({ level: 'info' }, out),
  };
  return { ctx, rows, lines };
}

async function started(ctx: ChannelContext): Promise<WebsocketChannel> {
  const ch = new WebsocketChannel({
    account: 'default',
    allowedOrigins: [],
    helloTimeoutMs: 10_000,
    maxPayload: 1 << 20,
    maxUnauthenticatedPerAddress: 4,
    maxUnauthenticated: 16,
    required: false,
    upgrades: new WebsocketUpgrades(),
  });
  await ch.start(ctx);
  return ch;
}

function connect(ch: WebsocketChannel, socket: FakeSocket, principalId = 'p1'): void {
  ch.connected(socket as unknown as WebSocket, { auth: { principalId, tokenId: `tok-${principalId}` }, address: '127.0.0.1' }, new PassThrough());
}

async function* events(...evs: TurnEvent[]): AsyncIterable<TurnEvent> {
  yield* evs;
}

const to = { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' } as const;
const meta = { clientId: 'c1', resumed: false };
const turn = (text: string) => events({ type: 'text_delta', text }, { type: 'turn_end', state: 'completed', reason: 'completed', text });
const typesOf = (s: FakeSocket) => s.frames.map((f) => f.type);

describe('WebsocketChannel.render never rejects', () => {
  it('resolves when the ledger write of the final fails, logs it, and the deltas were still streamed', async () => {
    const { ctx, rows, lines } = fakeContext({ failRecord: true });
    const ch = await started(ctx);
    const socket = new FakeSocket();
    connect(ch, socket);
    await expect(ch.render(to, 't1', turn('hello'), meta)).resolves.toBeUndefined();
    expect(typesOf(socket)).toEqual(['hello_ok', 'delta']);
    expect(rows).toHaveLength(0);
    expect(lines.some((l) => l.msg === 'websocket render step failed')).toBe(true);
    await ch.stop();
  });

  it('a socket that throws on send costs only its own frames: the other socket gets the turn, render resolves', async () => {
    const { ctx, rows, lines } = fakeContext();
    const ch = await started(ctx);
    const broken = new FakeSocket(true);
    const good = new FakeSocket();
    connect(ch, broken);
    connect(ch, good);
    await expect(ch.render(to, 't2', turn('hi there'), meta)).resolves.toBeUndefined();
    expect(typesOf(good)).toEqual(['hello_ok', 'delta', 'final']);
    expect(good.frames.at(-1)).toMatchObject({ type: 'final', turnId: 't2', clientId: 'c1', text: 'hi there', cursor: 1 });
    expect(rows).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'websocket send failed').length).toBeGreaterThan(0);
    await ch.stop();
  });

  it('a closed socket is skipped; a second render of the same turn (resume) sends no second final', async () => {
    const { ctx, rows } = fakeContext();
    const ch = await started(ctx);
    const closed = new FakeSocket();
    const open = new FakeSocket();
    connect(ch, closed);
    connect(ch, open);
    closed.readyState = 3;
    await ch.render(to, 't3', turn('once'), meta);
    await ch.render(to, 't3', turn('once'), { ...meta, resumed: true });
    expect(closed.frames.map((f) => f.type)).toEqual(['hello_ok']);
    expect(typesOf(open).filter((t) => t === 'final')).toHaveLength(1);
    expect(rows).toHaveLength(1);
    await ch.stop();
  });

  it('resolves when the turn stream itself throws', async () => {
    const { ctx, lines } = fakeContext();
    const ch = await started(ctx);
    async function* broken(): AsyncIterable<TurnEvent> {
      yield { type: 'text_delta', text: 'a' };
      throw new Error('stream broke');
    }
    await expect(ch.render(to, 't4', broken(), meta)).resolves.toBeUndefined();
    expect(lines.some((l) => l.msg === 'websocket render failed')).toBe(true);
    await ch.stop();
  });
});
