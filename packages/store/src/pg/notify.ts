import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Sql } from './db.js';

// Fan-out between replicas over PostgreSQL's LISTEN/NOTIFY (issue 20). A payload names what
// changed (ids), never content: NOTIFY payloads are limited to 8,000 bytes and are delivered only
// to listeners connected at commit time, with no replay. After a reconnect the bus emits `resync`
// so subscribers re-read what they may have missed from the tables.

/** A fan-out event: a topic, the sending replica and flat id fields. */
export interface BusEvent {
  topic: string;
  /** The replica that published it. */
  from: string;
  [field: string]: string | number | boolean | null;
}

/** NOTIFY payloads must be shorter than 8,000 bytes (default build); stay well under it. */
export const MAX_PAYLOAD_BYTES = 7900;

/** The listen channel name: an identifier of letters, digits and `_`. */
const CHANNEL_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Parses one payload; null for anything that is not a flat JSON object with string `topic` and `from`. */
export function parseBusPayload(payload: unknown): BusEvent | null {
  if (typeof payload !== 'string' || payload.length > MAX_PAYLOAD_BYTES * 4) return null;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const out: Record<string, string | number | boolean | null> = Object.create(null);
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === null || typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))) out[k] = x;
    else return null;
  }
  if (typeof out.topic !== 'string' || out.topic === '' || typeof out.from !== 'string') return null;
  return { ...out } as BusEvent;
}

/** Encodes an event; throws when it would not fit a NOTIFY payload. */
export function encodeBusEvent(e: BusEvent): string {
  const s = JSON.stringify(e);
  if (Buffer.byteLength(s) > MAX_PAYLOAD_BYTES) throw new Error(`bus event ${e.topic} is ${Buffer.byteLength(s)} bytes: send ids, not content`);
  return s;
}

/** Publishes on `q` (a pool, or a transaction: then it is delivered at commit). */
export async function publish(q: Sql, channel: string, e: BusEvent): Promise<void> {
  await q.run('SELECT pg_notify($1, $2)', [channel, encodeBusEvent(e)]);
}

export interface BusOptions {
  url: string;
  /** The LISTEN channel (default `switchboard`). */
  channel?: string;
  /** Milliseconds between reconnect attempts after the listening connection failed. */
  reconnectDelay?: number;
  /** Told about connection failures (never thrown). */
  onError?: (err: unknown) => void;
}

/**
 * The listening side: one dedicated connection (LISTEN needs one; a pool would hand it around).
 * Events: `event` (a {@link BusEvent}), `resync` (after a reconnect: notifications may have been
 * missed), `down` (the connection failed; reconnecting).
 */
export class PgBus extends EventEmitter {
  readonly channel: string;
  private client: pg.Client | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private connected = false;
  private everConnected = false;

  constructor(private readonly opts: BusOptions) {
    super();
    this.channel = opts.channel ?? 'switchboard';
    if (!CHANNEL_RE.test(this.channel)) throw new Error(`bus channel must be a lower-case identifier (got ${JSON.stringify(this.channel)})`);
  }

  /** Connects and listens; rejects when the first connection fails (later failures reconnect). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** True while the listening connection is up. */
  get up(): boolean {
    return this.connected;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.url, application_name: 'switchboard-bus' });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the listening connection ended')));
    client.on('notification', (n) => {
      if (n.channel !== this.channel) return;
      const e = parseBusPayload(n.payload);
      if (e) this.emit('event', e);
    });
    await client.connect();
    try {
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.everConnected;
    this.client = client;
    this.connected = true;
    this.everConnected = true;
    if (reconnected) this.emit('resync');
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.connected = false;
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.opts.onError?.(err);
    this.emit('down');
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().catch((err) => {
        this.opts.onError?.(err);
        this.schedule();
      });
    }, this.opts.reconnectDelay ?? 1000);
    this.timer.unref();
  }

  /** Stops listening and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    this.connected = false;
    if (c) await c.end().catch(() => undefined);
  }
}
