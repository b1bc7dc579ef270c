import type {
  Channel,
  ChannelContext,
  ChannelHealth,
  ConversationRef,
  DeliveryRecord,
  RenderMeta,
  TurnEvent,
} from '@switchboard/core';
import type {} from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import { randomUUID } from 'node:crypto';
import { CLIENT_FRAME_TYPES, clientFrame, MAX_PREAUTH_BYTES, type ServerFrame } from './frames.js';

export interface WebsocketAccountOptions {
  account: string;
  allowedOrigins: readonly string[];
  helloTimeoutMs: number;
  maxPayload: number;
  required: boolean;
}

interface Auth {
  principalId: string;
  tokenId: string;
}

interface Conn {
  socket: WebSocket;
  auth: Auth | null;
  /** Frames wait here while a replay is sent, so a final is never sent twice or out of order. */
  buffer: ServerFrame[] | null;
  /** Highest final cursor sent on this socket. */
  sent: number;
  /** The client's socket address, for failed-auth rate limiting. */
  address: string | undefined;
}

type AuthedRequest = FastifyRequest & { swbAuth?: Auth };

/** The URL path an account's clients connect to. */
export function websocketPath(account: string): string {
  return account === 'default' ? '/ws' : `/ws/${account}`;
}

function normalizeOrigin(o: string): string {
  try {
    return new URL(o).origin;
  } catch {
    return o;
  }
}

/**
 * The WebSocket channel: clients chat as the principal their client token belongs to.
 * Authentication is checked before the upgrade (Authorization header) or by the first frame.
 */
export class WebsocketChannel implements Channel {
  readonly type = 'websocket';
  readonly id: string;
  readonly account: string;
  readonly required: boolean;
  readonly capabilities = { threads: false, edits: false, buttons: false, maxText: 100_000 };
  private ctx: ChannelContext | null = null;
  private readonly conns = new Map<string, Set<Conn>>();
  private readonly all = new Set<Conn>();
  private readonly origins: Set<string>;
  private stopped = false;

  constructor(private readonly o: WebsocketAccountOptions) {
    this.account = o.account;
    this.id = `websocket:${o.account}`;
    this.required = o.required;
    this.origins = new Set(o.allowedOrigins.map(normalizeOrigin));
  }

  async start(ctx: ChannelContext): Promise<void> {
    this.ctx = ctx;
    const path = websocketPath(this.account);
    await ctx.http.register(async (app: FastifyInstance) => {
      app.route({
        method: 'GET',
        url: path,
        onRequest: (req, reply, done) => {
          void this.checkUpgrade(req as AuthedRequest, reply).then(() => done(), done);
        },
        handler: async (_req, reply) =>
          reply.code(426).header('upgrade', 'websocket').send({ code: 'upgrade_required', message: 'This endpoint speaks WebSocket only.' }),
        wsHandler: (socket, req) => this.onConnection(socket, (req as AuthedRequest).swbAuth ?? null, req.socket.remoteAddress),
      });
    });
  }

  private async checkUpgrade(req: AuthedRequest, reply: FastifyReply): Promise<void> {
    if (req.url.includes('?')) {
      await reply.code(400).send({
        code: 'query_not_allowed',
        message: 'Query parameters are refused here: send the token in the Authorization header or in the hello frame.',
      });
      return;
    }
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') return;
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(normalizeOrigin(origin))) {
      await reply.code(403).send({ code: 'origin_refused', message: 'This Origin is not allowed to connect.' });
      return;
    }
    const header = req.headers.authorization;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const auth = m ? await this.ctx!.verifyClientToken(m[1]!, req.socket.remoteAddress) : null;
      if (auth && 'lockedOut' in auth) {
        await reply
          .code(429)
          .header('retry-after', String(auth.retryAfterSec))
          .send({ code: 'too_many_failed_attempts', message: `Too many failed attempts from this address; retry in ${auth.retryAfterSec} s.` });
        return;
      }
      if (!auth) {
        await reply.code(401).send({ code: 'unauthorized', message: 'The client token is missing, wrong or revoked.' });
        return;
      }
      req.swbAuth = auth;
    }
  }

  private onConnection(socket: WebSocket, auth: Auth | null, address: string | undefined): void {
    const conn: Conn = { socket, auth, buffer: null, sent: 0, address };
    this.all.add(conn);
    const log = this.ctx!.log.child({ channel: this.id, conn: randomUUID().slice(0, 8), principalId: auth?.principalId });
    let helloTimer: NodeJS.Timeout | undefined;
    if (auth) {
      this.attach(conn, auth);
      this.send(conn, { type: 'hello_ok', principalId: auth.principalId, cursor: 0 });
    } else {
      helloTimer = setTimeout(() => socket.close(1008, 'hello timeout'), this.o.helloTimeoutMs);
    }
    socket.on('message', (data: RawData, isBinary: boolean) => {
      void this.onFrame(conn, data, isBinary)
        .then(() => {
          if (conn.auth && helloTimer) {
            clearTimeout(helloTimer);
            helloTimer = undefined;
          }
        })
        .catch((err: unknown) => {
          const code = (err as { code?: unknown }).code;
          if (code === 'SWB_E_SHUTTING_DOWN') {
            this.send(conn, { type: 'error', code: 'shutting_down', message: (err as Error).message });
            return;
          }
          log.error({ err }, 'websocket frame handling failed');
          this.send(conn, { type: 'error', code: 'internal', message: 'The gateway could not handle this frame.' });
        });
    });
    socket.on('close', () => {
      if (helloTimer) clearTimeout(helloTimer);
      this.all.delete(conn);
      if (conn.auth) this.conns.get(conn.auth.principalId)?.delete(conn);
    });
    socket.on('error', (err) => log.warn({ err }, 'websocket error'));
  }

  private attach(conn: Conn, auth: Auth): void {
    conn.auth = auth;
    let set = this.conns.get(auth.principalId);
    if (!set) this.conns.set(auth.principalId, (set = new Set()));
    set.add(conn);
  }

  private async onFrame(conn: Conn, data: RawData, isBinary: boolean): Promise<void> {
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    if (!conn.auth && size > MAX_PREAUTH_BYTES) {
      conn.socket.close(1008, 'first frame too large');
      return;
    }
    if (size > this.o.maxPayload) {
      conn.socket.close(1009, 'frame too large');
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString());
    } catch {
      if (!conn.auth) return conn.socket.close(1008, 'the first frame must be a JSON hello');
      this.send(conn, { type: 'error', code: 'bad_frame', message: 'Frames must be JSON objects.' });
      return;
    }
    const parsed = clientFrame.safeParse(raw);
    if (!parsed.success) {
      if (!conn.auth) return conn.socket.close(1008, 'the first frame must be a valid hello');
      const type = (raw as { type?: unknown } | null)?.type;
      const known = typeof type === 'string' && CLIENT_FRAME_TYPES.includes(type);
      this.send(conn, {
        type: 'error',
        code: known ? 'bad_frame' : 'unknown_frame',
        message: known
          ? `Invalid ${String(type)} frame: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(frame)'}: ${i.message}`).join('; ')}`
          : `Unknown frame type ${JSON.stringify(type ?? null).slice(0, 40)}: expected one of ${CLIENT_FRAME_TYPES.join(', ')}.`,
      });
      return;
    }
    const frame = parsed.data;
    if (!conn.auth) {
      if (frame.type !== 'hello' || !frame.token) return conn.socket.close(1008, 'the first frame must be a hello with a token');
      const auth = await this.ctx!.verifyClientToken(frame.token, conn.address);
      if (auth && 'lockedOut' in auth) return conn.socket.close(1008, 'too many failed attempts');
      if (!auth) return conn.socket.close(1008, 'invalid token');
      this.attach(conn, auth);
      await this.replay(conn, frame.cursor ?? 0);
      return;
    }
    // A token revoked (or its principal removed) since the socket opened loses the connection.
    if (!(await this.ctx!.clientTokenActive(conn.auth.tokenId))) return conn.socket.close(1008, 'token revoked');
    switch (frame.type) {
      case 'hello':
        await this.replay(conn, frame.cursor ?? 0);
        return;
      case 'message':
        await this.onMessage(conn, frame.clientId, frame.text);
        return;
      case 'queue': {
        const r = await this.ctx!.updateSession(this.conversation(conn.auth.principalId), conn.auth.principalId, { queueMode: frame.mode });
        this.send(conn, { type: 'queue_ok', mode: r.queueMode, sessionId: r.sessionId });
        return;
      }
      case 'new_session':
        await this.ctx!.resetSession(this.conversation(conn.auth.principalId), conn.auth.principalId);
        this.send(conn, { type: 'session_reset' });
        return;
      case 'approve': {
        const r = await this.ctx!.decideApproval(frame.approvalId, frame.decision, frame.always ?? false, { principalId: conn.auth.principalId });
        this.send(conn, {
          type: 'approval_result',
          approvalId: frame.approvalId,
          outcome: r.outcome,
          ...(r.status ? { status: r.status } : {}),
          ...(r.decidedBy ? { decidedBy: r.decidedBy } : {}),
          ...(r.reason ? { reason: r.reason } : {}),
        });
        return;
      }
      case 'mode': {
        const r = await this.ctx!.setMode(this.conversation(conn.auth.principalId), conn.auth.principalId, frame.mode);
        if (r.ok) this.send(conn, { type: 'mode_ok', mode: r.mode });
        else this.send(conn, { type: 'error', code: 'mode_refused', message: r.reason });
        return;
      }
      case 'abort': {
        const ok = await this.ctx!.abortTurn(frame.turnId, this.conversation(conn.auth.principalId));
        if (!ok) this.send(conn, { type: 'error', code: 'not_running', message: 'That turn is not running.', turnId: frame.turnId });
        return;
      }
    }
  }

  private conversation(principalId: string): ConversationRef {
    return { channel: 'websocket', account: this.account, id: principalId, kind: 'dm' };
  }

  private async replay(conn: Conn, cursor: number): Promise<void> {
    const auth = conn.auth!;
    conn.buffer = [];
    try {
      const finals = await this.ctx!.finalsSince(this.conversation(auth.principalId), cursor);
      this.send(conn, { type: 'hello_ok', principalId: auth.principalId, cursor: finals.at(-1)?.id ?? cursor });
      for (const rec of finals) this.sendNow(conn, finalFrame(rec));
    } finally {
      const held = conn.buffer;
      conn.buffer = null;
      for (const f of held) this.send(conn, f);
    }
  }

  private async onMessage(conn: Conn, clientId: string, text: string): Promise<void> {
    const auth = conn.auth!;
    const res = await this.ctx!.accept({
      dedupeKey: `${auth.principalId}:${clientId}`,
      channel: 'websocket',
      account: this.account,
      conversation: this.conversation(auth.principalId),
      sender: { identity: `ws:${auth.tokenId}`, isBot: false },
      kind: 'dm',
      mentioned: true,
      text,
      platformId: clientId,
      receivedAt: new Date(),
      principalId: auth.principalId,
    });
    this.send(conn, { type: 'accepted', clientId, turnId: res.turnId, duplicate: res.duplicate });
    if (res.gate && res.gate !== 'admitted') {
      // Nothing will run for this message: say so against its client id.
      const message = res.gate === 'rate_limited' ? 'Too many messages: this one was not processed. Please slow down.' : `This message was not processed (${res.gate}).`;
      this.send(conn, { type: 'error', code: res.gate, message, clientId });
      return;
    }
    if (res.duplicate && res.turnId) {
      // A re-sent id: resend the stored final; a turn still running streams to every socket anyway.
      const finals = (await this.ctx!.deliveriesOf(res.turnId)).filter((d) => d.kind === 'final');
      for (const rec of finals) this.sendNow(conn, finalFrame(rec), true);
    }
  }

  private send(conn: Conn, frame: ServerFrame): void {
    if (conn.buffer) {
      conn.buffer.push(frame);
      return;
    }
    this.sendNow(conn, frame);
  }

  private sendNow(conn: Conn, frame: ServerFrame, force = false): void {
    if ((frame.type === 'final' || (frame.type === 'error' && frame.cursor !== undefined)) && !force) {
      const cursor = frame.cursor!;
      if (cursor <= conn.sent) return;
      conn.sent = cursor;
    }
    if (conn.socket.readyState === conn.socket.OPEN) conn.socket.send(JSON.stringify(frame));
  }

  private broadcast(principalId: string, frame: ServerFrame): void {
    for (const c of this.conns.get(principalId) ?? []) this.send(c, frame);
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const clientId = meta.clientId;
    const principal = to.id;
    for await (const ev of turn) {
      switch (ev.type) {
        case 'text_delta':
          this.broadcast(principal, { type: 'delta', turnId, clientId, text: ev.text });
          break;
        case 'attempt_reset':
          this.broadcast(principal, { type: 'attempt_reset', turnId, clientId });
          break;
        case 'tool_start':
          this.broadcast(principal, { type: 'tool', turnId, clientId, phase: 'start', name: ev.name, toolUseId: ev.toolUseId });
          break;
        case 'tool_end':
          this.broadcast(principal, {
            type: 'tool',
            turnId,
            clientId,
            phase: 'end',
            name: ev.name,
            toolUseId: ev.toolUseId,
            ...(ev.result.is_error ? { isError: true } : {}),
          });
          break;
        case 'approval_requested':
          this.broadcast(principal, {
            type: 'approval_request',
            approvalId: ev.approvalId,
            turnId,
            clientId,
            tool: ev.name,
            summary: ev.summary,
            expiresAt: ev.expiresAt,
            ...(ev.source ? { source: ev.source } : {}),
          });
          break;
        case 'approval_resolved':
          this.broadcast(principal, { type: 'approval_resolved', approvalId: ev.approvalId, turnId, allowed: ev.allowed, by: ev.by });
          break;
        case 'turn_end': {
          const { record, existed } = await this.ctx!.recordDelivery({
            turnId,
            part: 0,
            kind: 'final',
            channel: 'websocket',
            account: this.account,
            conversationId: principal,
            platformMessageId: null,
            content: { text: ev.text, state: ev.state, reason: ev.reason, clientId, ...(ev.error ? { error: ev.error } : {}) },
          });
          if (!existed) this.broadcast(principal, finalFrame(record));
          break;
        }
        default:
          break;
      }
    }
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    this.broadcast(to.id, { type: 'notice', text });
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    return { state: 'up', detail: `${this.all.size} connection(s)` };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const c of this.all) c.socket.close(1001, 'server shutting down');
  }
}

/** The frame that ends a turn, from its ledger record (live and on replay alike). */
export function finalFrame(rec: DeliveryRecord): ServerFrame {
  const c = rec.content;
  const clientId = c.clientId ?? null;
  if (c.state === 'completed') {
    const frame: ServerFrame = { type: 'final', turnId: rec.turnId, clientId, text: c.text, reason: c.reason ?? 'completed', cursor: rec.id };
    // A completed turn can still carry a note, e.g. an answer cut off by the output limit.
    return c.error ? { ...frame, note: c.error } : frame;
  }
  return {
    type: 'error',
    code: c.reason ?? 'failed',
    message: c.error ?? 'The turn failed.',
    turnId: rec.turnId,
    clientId,
    text: c.text,
    cursor: rec.id,
  };
}
