import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { SlackIdentity, SlackSocketAck, SlackSocketInfo, SlackSocketSendOptions, SlackSocketStats } from './fake-slack-types.js';

/** What the socket server needs from the fake that owns it. */
export interface SocketServerDeps {
  identity: SlackIdentity;
  serverPingIntervalMs: number;
  log(entry: Record<string, unknown>): void;
  changed(): void;
  waitFor<T>(fn: () => T | undefined | null | false, timeoutMs: number, what: string): Promise<T>;
}

interface Conn {
  ws: WebSocket;
  info: SlackSocketInfo;
  answerPings: boolean;
  pingTimer?: NodeJS.Timeout;
  helloTimer?: NodeJS.Timeout;
  helloSent: boolean;
}

interface Pending {
  type: string;
  socketId: number;
  sentAt: number;
  resolve(ack: SlackSocketAck): void;
  reject(err: Error): void;
}

/** The Socket Mode side of the fake: tickets, `hello`, envelopes and acks, disconnects, ping/pong and deafness. */
export class SlackSocketModeServer {
  readonly acks: SlackSocketAck[] = [];
  connectionsOpenCalls = 0;
  private readonly wss = new WebSocketServer({ noServer: true, autoPong: false, clientTracking: false });
  private readonly tickets = new Set<string>();
  private readonly conns = new Map<number, Conn>();
  private readonly pending = new Map<string, Pending>();
  private ticketSeq = 0;
  private socketSeq = 0;
  private envelopeSeq = 0;
  private maxLive = 0;
  private opened = 0;
  private helloDelayMs = 0;

  constructor(private readonly deps: SocketServerDeps) {}

  /** Delays `hello` on connections accepted from now on (0 = immediately; < 0 = never). */
  setHelloDelay(ms: number): void {
    this.helloDelayMs = ms;
  }

  /** Issues a single-use ticket for `apps.connections.open`'s `url`. */
  issueTicket(): string {
    const ticket = `tkt-test-${++this.ticketSeq}`;
    this.tickets.add(ticket);
    return ticket;
  }

  /** The HTTP server's `upgrade` handler: `/socket?ticket=…` with an unused ticket, else 401. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const ticket = url.searchParams.get('ticket') ?? '';
    if (url.pathname !== '/socket' || !this.tickets.delete(ticket)) {
      this.deps.log({ socket: 'rejected', path: url.pathname });
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  private accept(ws: WebSocket): void {
    const info: SlackSocketInfo = { id: ++this.socketSeq, openedAt: Date.now(), deaf: false, pingsReceived: 0, pongsSent: 0, pingsSent: 0, envelopesSent: 0 };
    const conn: Conn = { ws, info, answerPings: true, helloSent: false };
    this.conns.set(info.id, conn);
    this.opened++;
    this.maxLive = Math.max(this.maxLive, this.liveSockets());
    ws.on('ping', (data) => {
      info.pingsReceived++;
      if (!info.deaf || conn.answerPings) {
        ws.pong(data);
        info.pongsSent++;
      }
      this.deps.changed();
    });
    ws.on('message', (data) => this.onMessage(conn, data));
    ws.on('error', (err) => this.deps.log({ socket: info.id, error: err.message }));
    ws.on('close', (code) => {
      info.closedAt = Date.now();
      info.closeCode = code;
      clearInterval(conn.pingTimer);
      clearTimeout(conn.helloTimer);
      this.deps.log({ socket: info.id, closed: code, lifetimeMs: info.closedAt - info.openedAt });
      for (const [envelopeId, p] of this.pending) {
        if (p.socketId !== info.id) continue;
        this.pending.delete(envelopeId);
        p.reject(new Error(`fake-slack: socket ${info.id} closed before envelope ${envelopeId} was acked`));
      }
      this.deps.changed();
    });
    if (this.deps.serverPingIntervalMs > 0) {
      conn.pingTimer = setInterval(() => {
        if (info.deaf || ws.readyState !== WebSocket.OPEN) return;
        ws.ping();
        info.pingsSent++;
      }, this.deps.serverPingIntervalMs);
    }
    const hello = {
      type: 'hello',
      num_connections: this.liveSockets(),
      debug_info: { host: 'applink-fake-1', build_number: 1, approximate_connection_time: 18060 },
      connection_info: { app_id: this.deps.identity.appId },
    };
    const sendHello = () => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(JSON.stringify(hello));
      conn.helloSent = true;
      this.deps.changed();
      this.deps.log({ socket: info.id, hello: true });
    };
    if (this.helloDelayMs === 0) sendHello();
    else if (this.helloDelayMs > 0) conn.helloTimer = setTimeout(sendHello, this.helloDelayMs);
    this.deps.log({ socket: info.id, opened: true, live: this.liveSockets() });
    this.deps.changed();
  }

  private onMessage(conn: Conn, data: RawData): void {
    let msg: { envelope_id?: unknown; payload?: unknown };
    try {
      msg = JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8')) as typeof msg;
    } catch {
      this.deps.log({ socket: conn.info.id, unparsable: true });
      return;
    }
    const envelopeId = typeof msg.envelope_id === 'string' ? msg.envelope_id : undefined;
    const p = envelopeId !== undefined ? this.pending.get(envelopeId) : undefined;
    if (envelopeId === undefined || p === undefined) {
      this.deps.log({ socket: conn.info.id, unexpected: envelopeId ?? 'message' });
      return;
    }
    this.pending.delete(envelopeId);
    const ackedAt = Date.now();
    const ack: SlackSocketAck = { envelopeId, type: p.type, socketId: conn.info.id, payload: msg.payload, elapsedMs: ackedAt - p.sentAt, ackedAt };
    this.acks.push(ack);
    this.deps.log({ socket: conn.info.id, ack: envelopeId, elapsedMs: ack.elapsedMs });
    p.resolve(ack);
    this.deps.changed();
  }

  /** Sends an envelope to the newest live, non-deaf socket (waiting for one) and resolves on its ack. */
  async send(type: string, payload: Record<string, unknown>, opts: SlackSocketSendOptions = {}): Promise<SlackSocketAck> {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    const conn = await this.deps.waitFor(() => this.target(), timeoutMs, `a live, non-deaf socket for a ${type} envelope`);
    const envelopeId = opts.envelopeId ?? `env-test-${++this.envelopeSeq}`;
    const envelope: Record<string, unknown> = {
      envelope_id: envelopeId,
      type,
      accepts_response_payload: opts.acceptsResponsePayload ?? type !== 'events_api',
      payload,
    };
    if (type === 'events_api') {
      envelope.retry_attempt = opts.retryAttempt ?? 0;
      envelope.retry_reason = opts.retryReason ?? '';
    }
    const acked = new Promise<SlackSocketAck>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(envelopeId);
          reject(new Error(`fake-slack: envelope ${envelopeId} (${type}) not acked within ${timeoutMs} ms`));
        },
        Math.max(1, deadline - Date.now()),
      );
      this.pending.set(envelopeId, {
        type,
        socketId: conn.info.id,
        sentAt: Date.now(),
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
    conn.ws.send(JSON.stringify(envelope));
    conn.info.envelopesSent++;
    this.deps.log({ socket: conn.info.id, envelope: envelopeId, type, eventType: (payload.event as { type?: unknown } | undefined)?.type });
    this.deps.changed();
    return acked;
  }

  /** Sends `{type:'disconnect', reason}` to every live socket; returns how many. */
  disconnect(reason: string): number {
    let n = 0;
    for (const c of this.live()) {
      c.ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'applink-fake-1' } }));
      n++;
    }
    this.deps.log({ disconnect: reason, sockets: n });
    return n;
  }

  /** Makes the newest live socket deaf; see `FakeSlack.makeSocketDeaf`. */
  makeDeaf(opts: { answerPings?: boolean; halfOpen?: boolean } = {}): number {
    const conn = this.live().at(-1);
    if (!conn) throw new Error('fake-slack: makeSocketDeaf: no live socket');
    conn.info.deaf = true;
    conn.answerPings = opts.answerPings ?? false;
    if (opts.halfOpen) conn.ws.pause();
    this.deps.log({ socket: conn.info.id, deaf: true, answerPings: conn.answerPings, halfOpen: opts.halfOpen ?? false });
    this.deps.changed();
    return conn.info.id;
  }

  liveSockets(): number {
    return this.live().length;
  }

  sockets(): SlackSocketInfo[] {
    return [...this.conns.values()].map((c) => ({ ...c.info }));
  }

  stats(): SlackSocketStats {
    return { live: this.liveSockets(), maxLive: this.maxLive, connectionsOpened: this.opened, connectionsOpenCalls: this.connectionsOpenCalls };
  }

  /** Terminates every socket and rejects pending acks. */
  close(): void {
    for (const c of this.conns.values()) {
      clearInterval(c.pingTimer);
      clearTimeout(c.helloTimer);
      c.ws.terminate();
    }
    for (const [id, p] of this.pending) p.reject(new Error(`fake-slack: closed before envelope ${id} was acked`));
    this.pending.clear();
    this.wss.close();
  }

  private live(): Conn[] {
    return [...this.conns.values()].filter((c) => c.info.closedAt === undefined);
  }

  private target(): Conn | undefined {
    return this.live()
      .filter((c) => !c.info.deaf && c.helloSent && c.ws.readyState === WebSocket.OPEN)
      .at(-1);
  }
}
