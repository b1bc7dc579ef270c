import type {
  AccessChange,
  Channel,
  ChannelClientAuth,
  ChannelContext,
  ChannelFanout,
  ChannelHealth,
  ConversationRef,
  DeliveryRecord,
  OutboundFile,
  PendingApproval,
  RenderMeta,
  SendFileMeta,
  TurnEvent,
  TurnLedger,
} from '@switchboard/core';
import { isSwbError, SwbErrorCode } from '@switchboard/core';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { runCommandFrame } from './command-frames.js';
import { CLIENT_FRAME_TYPES, clientFrame, MAX_PREAUTH_BYTES, type ServerFrame } from './frames.js';
import { UnauthenticatedCaps } from './unauthenticated-caps.js';
import type { UpgradeAdmission, UpgradeRefusal, UpgradeTarget, WebsocketUpgrades } from './upgrades.js';

export interface WebsocketAccountOptions {
  account: string;
  allowedOrigins: readonly string[];
  helloTimeoutMs: number;
  /** Largest frame on a connection whose upgrade carried a valid token (others: 64 KiB). */
  maxPayload: number;
  /** Open unauthenticated connections per client address, and in all. */
  maxUnauthenticatedPerAddress: number;
  maxUnauthenticated: number;
  required: boolean;
  /** The upgrade handler shared by every account of the channel (see `createWebsocketChannels`). */
  upgrades: WebsocketUpgrades;
}

interface Auth {
  principalId: string;
  tokenId: string;
  /** The console session a web chat socket was opened with (cookie upgrade). */
  sessionId?: string;
}

interface Conn {
  socket: WebSocket;
  auth: Auth | null;
  /** Frames wait here while a replay is sent, so a final is never sent twice or out of order. */
  buffer: ServerFrame[] | null;
  /** Frames are handled one at a time, in the order they arrived: the tail of that chain. */
  frames: Promise<void>;
  /** Frames received and not yet handled. */
  pending: number;
  /** Highest final cursor sent on this socket. */
  sent: number;
  /** The client's address key, for failed-auth rate limiting. */
  address: string;
  /** Frees this connection's unauthenticated slot (once authenticated or closed). */
  release: () => void;
}

const QUERY_REFUSED = {
  code: 'query_not_allowed',
  message: 'Query parameters are refused here: send the token in the Authorization header or in the hello frame.',
};

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
export class WebsocketChannel implements Channel, UpgradeTarget {
  readonly type = 'websocket';
  readonly id: string;
  readonly account: string;
  readonly required: boolean;
  readonly capabilities = { threads: false, edits: false, buttons: false, maxText: 100_000 };
  readonly authenticatesClients = true;
  private ctx: ChannelContext | null = null;
  /** The context's client-token authentication (the gateway gives it to this channel). */
  private clientAuth: ChannelClientAuth | null = null;
  private readonly conns = new Map<string, Set<Conn>>();
  private readonly all = new Set<Conn>();
  private readonly origins: Set<string>;
  private readonly upgrades: WebsocketUpgrades;
  private readonly caps: UnauthenticatedCaps;
  private unsubscribe: (() => void) | null = null;
  /** Frames for this person's sockets on other replicas (a gateway on PostgreSQL); null on a single gateway. */
  private fanout: ChannelFanout | null = null;
  private unfan: (() => void) | null = null;
  /** The live `approval_request` frames not yet resolved, so a client that comes back sees the same frame. */
  private readonly requests = new Map<string, ApprovalRequestFrame>();
  private stopped = false;
  readonly path: string;
  readonly authenticatedServer: WebSocketServer;
  readonly unauthenticatedServer: WebSocketServer;

  constructor(private readonly options: WebsocketAccountOptions) {
    this.account = options.account;
    this.id = `websocket:${options.account}`;
    this.required = options.required;
    this.path = websocketPath(options.account);
    this.origins = new Set(options.allowedOrigins.map(normalizeOrigin));
    this.upgrades = options.upgrades;
    this.authenticatedServer = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
    this.unauthenticatedServer = new WebSocketServer({ noServer: true, maxPayload: Math.min(MAX_PREAUTH_BYTES, options.maxPayload) });
    this.caps = new UnauthenticatedCaps({ account: options.account, perAddress: options.maxUnauthenticatedPerAddress, total: options.maxUnauthenticated });
  }

  async start(ctx: ChannelContext): Promise<void> {
    if (!ctx.clientAuth) throw new Error(`${this.id}: the channel context has no clientAuth (the WebSocket channel authenticates its clients)`);
    this.ctx = ctx;
    this.clientAuth = ctx.clientAuth;
    this.upgrades.add(this);
    this.unsubscribe = ctx.clientAuth.onAccessChange((change) => this.onAccessChange(change));
    if (ctx.fanout) {
      this.fanout = ctx.fanout;
      this.unfan = ctx.fanout.onFrames((audience, frames) => this.fromReplica(audience, frames));
    }
    await ctx.http.register(async (app: FastifyInstance) => {
      this.upgrades.install(app.server);
      // Plain HTTP requests to the path (upgrades never reach Fastify: see WebsocketUpgrades).
      app.get(this.path, async (req, reply) =>
        req.url.includes('?')
          ? reply.code(400).send(QUERY_REFUSED)
          : reply.code(426).header('upgrade', 'websocket').send({ code: 'upgrade_required', message: 'This endpoint speaks WebSocket only.' }),
      );
    });
  }

  /** Checks an upgrade before the handshake: query, Origin, the Authorization header, the caps. */
  async admit(req: IncomingMessage, socket: Duplex): Promise<UpgradeRefusal | UpgradeAdmission> {
    if (this.stopped || !this.ctx!.inbox.accepting()) return { status: 503, code: 'shutting_down', message: 'The gateway is shutting down.' };
    if ((req.url ?? '').includes('?')) return { status: 400, ...QUERY_REFUSED };
    const address = this.clientAuth!.addressOf(req);
    // The web chat: a console session cookie from the console's own origin, whatever allowedOrigins says.
    if (req.headers.authorization === undefined && this.clientAuth!.consoleSession) {
      const web = await this.clientAuth!.consoleSession(req);
      if (web && 'refused' in web) return web.refused;
      if (web) return { auth: web, address };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(normalizeOrigin(origin))) {
      return { status: 403, code: 'origin_refused', message: 'This Origin is not allowed to connect.' };
    }
    const header = req.headers.authorization;
    if (header === undefined) {
      // No await from here to the handshake: the reservation and the count cannot race.
      const slot = this.caps.reserve(address);
      if (typeof slot !== 'function') return slot;
      socket.once('close', slot);
      return { auth: null, address, release: slot };
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const auth = m ? await this.clientAuth!.verify(m[1]!, address) : null;
    if (auth && 'lockedOut' in auth) {
      return {
        status: 429,
        code: 'too_many_failed_attempts',
        message: `Too many failed attempts from this address; retry in ${auth.retryAfterSec} s.`,
        headers: { 'retry-after': String(auth.retryAfterSec) },
      };
    }
    if (!auth) return { status: 401, code: 'unauthorized', message: 'The client token is missing, wrong or revoked.' };
    return { auth, address };
  }

  failed(err: unknown): void {
    this.ctx?.log.error({ err, channel: this.id }, 'websocket upgrade failed');
  }

  /** Cuts the sockets an access change takes authority from, without waiting for their next frame. */
  private onAccessChange(change: AccessChange): void {
    for (const c of this.all) {
      const a = c.auth;
      if (!a) continue;
      if (change.type === 'token_revoked' && a.tokenId === change.tokenId) this.cut(c, 'token revoked');
      else if (change.type === 'token_expired' && a.tokenId === change.tokenId) this.cut(c, 'token expired');
      else if (change.type === 'principal_removed' && a.principalId === change.principalId) this.cut(c, 'principal removed');
      else if (change.type === 'principal_demoted' && a.principalId === change.principalId) this.cut(c, 'role changed');
      else if (change.type === 'console_session_ended' && a.sessionId === change.sessionId) this.cut(c, 'signed out');
    }
  }

  private cut(conn: Conn, reason: string): void {
    if (conn.auth) this.conns.get(conn.auth.principalId)?.delete(conn);
    conn.socket.close(1008, reason);
  }

  connected(socket: WebSocket, admission: UpgradeAdmission, raw: Duplex): void {
    this.onConnection(socket, admission.auth, admission.address, admission.release ?? (() => undefined), raw);
  }

  private onConnection(socket: WebSocket, auth: Auth | null, address: string, release: () => void, raw?: Duplex): void {
    const conn: Conn = { socket, auth, buffer: null, frames: Promise.resolve(), pending: 0, sent: 0, address, release };
    this.all.add(conn);
    const log = this.ctx!.log.child({ channel: this.id, conn: randomUUID().slice(0, 8), principalId: auth?.principalId });
    let helloTimer: NodeJS.Timeout | undefined;
    if (auth) {
      this.attach(conn, auth);
      this.send(conn, { type: 'hello_ok', principalId: auth.principalId, cursor: 0 });
    } else {
      helloTimer = setTimeout(() => socket.close(1008, 'hello timeout'), this.options.helloTimeoutMs);
    }
    socket.on('message', (data: RawData, isBinary: boolean) => {
      // One frame at a time per connection: answers come in the order the frames were sent, a
      // frame after `hello` sees the connection authenticated, and replays never overlap.
      if (++conn.pending > MAX_PENDING_FRAMES) {
        socket.close(1008, `more than ${MAX_PENDING_FRAMES} frames waiting: wait for answers before sending more`);
        return;
      }
      conn.frames = conn.frames
        .then(() => (socket.readyState === socket.OPEN ? this.onFrame(conn, data, isBinary) : undefined))
        .finally(() => {
          conn.pending--;
        })
        .then(() => {
          if (conn.auth && helloTimer) {
            clearTimeout(helloTimer);
            helloTimer = undefined;
          }
        })
        .catch((err: unknown) => {
          if (isSwbError(err, SwbErrorCode.ShuttingDown)) {
            this.send(conn, { type: 'error', code: 'shutting_down', message: err.message });
            return;
          }
          if (isSwbError(err, SwbErrorCode.StorageUnavailable)) {
            // Nothing of the frame was stored: the client sends it again (same clientId) shortly.
            const clientId = frameClientId(data);
            this.send(conn, {
              type: 'error',
              code: 'storage_unavailable',
              message: 'The gateway cannot reach its database right now; send this frame again shortly.',
              ...(clientId !== undefined ? { clientId } : {}),
            });
            return;
          }
          log.error({ err }, 'websocket frame handling failed');
          this.send(conn, { type: 'error', code: 'internal', message: 'The gateway could not handle this frame.' });
        });
    });
    socket.on('close', () => {
      if (helloTimer) clearTimeout(helloTimer);
      conn.release();
      this.all.delete(conn);
      if (conn.auth) this.conns.get(conn.auth.principalId)?.delete(conn);
    });
    // A client breaking the protocol (too large a frame, bad framing) is the client's problem:
    // ws has queued the close frame (1009, 1002, …). The rest of what the client sent is not
    // read (ws would read and discard it): the connection is cut once the close frame is out.
    socket.on('error', (err: Error & { code?: string }) => {
      if (!String(err.code ?? '').startsWith('WS_ERR_')) return log.warn({ err }, 'websocket error');
      log.debug({ err }, 'websocket protocol error');
      if (raw) process.nextTick(() => raw.destroy());
    });
  }

  private attach(conn: Conn, auth: Auth): void {
    conn.release();
    conn.auth = auth;
    let set = this.conns.get(auth.principalId);
    if (!set) this.conns.set(auth.principalId, (set = new Set()));
    set.add(conn);
  }

  private async onFrame(conn: Conn, data: RawData, isBinary: boolean): Promise<void> {
    // Frame size is enforced by ws itself (close 1009): 64 KiB unless the upgrade carried a token.
    if (isBinary) {
      conn.socket.close(1003, 'binary frames are not accepted: send JSON text frames');
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
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
      const auth = await this.clientAuth!.verify(frame.token, conn.address);
      if (auth && 'lockedOut' in auth) return conn.socket.close(1008, 'too many failed attempts');
      if (!auth) return conn.socket.close(1008, 'invalid token');
      this.attach(conn, auth);
      await this.replay(conn, frame.cursor ?? 0);
      return;
    }
    // A token revoked (or its principal removed) since the socket opened loses the connection.
    if (!(await this.clientAuth!.tokenActive(conn.auth.tokenId))) return conn.socket.close(1008, 'token revoked');
    switch (frame.type) {
      case 'hello':
        await this.replay(conn, frame.cursor ?? 0);
        return;
      case 'message':
        await this.onMessage(conn, frame.clientId, frame.text);
        return;
      case 'queue': {
        const r = await this.ctx!.people.updateSession(this.conversation(conn.auth.principalId), conn.auth.principalId, { queueMode: frame.mode });
        this.send(conn, { type: 'queue_ok', mode: r.queueMode, sessionId: r.sessionId });
        return;
      }
      case 'new_session':
        await this.ctx!.people.resetSession(this.conversation(conn.auth.principalId), conn.auth.principalId);
        this.send(conn, { type: 'session_reset' });
        return;
      case 'approve': {
        const r = await this.ctx!.approvals.decide(frame.approvalId, frame.decision, frame.always ?? false, { principalId: conn.auth.principalId }, frame.mode);
        this.send(conn, {
          type: 'approval_result',
          approvalId: frame.approvalId,
          outcome: r.outcome,
          ...(r.status ? { status: r.status } : {}),
          ...(r.decidedBy ? { decidedBy: r.decidedBy } : {}),
          ...(r.reason ? { reason: r.reason } : {}),
          ...(r.choice ? { choice: r.choice } : {}),
        });
        return;
      }
      case 'mode': {
        const r = await this.ctx!.people.setMode(this.conversation(conn.auth.principalId), conn.auth.principalId, frame.mode);
        if (r.ok) this.send(conn, { type: 'mode_ok', mode: r.mode });
        else this.send(conn, { type: 'error', code: 'mode_refused', message: r.reason });
        return;
      }
      case 'command': {
        const { principalId, tokenId } = conn.auth;
        this.send(
          conn,
          await runCommandFrame(this.ctx!.commands, frame, { principalId, identity: `ws:${tokenId}`, conversation: this.conversation(principalId) }),
        );
        return;
      }
      case 'abort': {
        const ok = await this.ctx!.people.abortTurn(frame.turnId, this.conversation(conn.auth.principalId));
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
      const finals = await this.ctx!.ledger.finalsSince(auth.principalId, cursor);
      // hello_ok first, then the replayed finals, then whatever arrived meanwhile.
      this.sendNow(conn, { type: 'hello_ok', principalId: auth.principalId, cursor: finals.at(-1)?.id ?? cursor });
      for (const rec of finals) this.sendNow(conn, finalFrame(rec));
      // Then every approval still waiting for this person: a client that was away would never see it.
      for (const p of await this.ctx!.approvals.pending(this.conversation(auth.principalId))) this.sendNow(conn, this.requestFrame(p));
    } finally {
      const held = conn.buffer;
      conn.buffer = null;
      for (const f of held) this.send(conn, f);
    }
  }

  private async onMessage(conn: Conn, clientId: string, text: string): Promise<void> {
    const auth = conn.auth!;
    const res = await this.ctx!.inbox.accept({
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
    if (res.duplicate && res.sameText === false) {
      // The id names an earlier, different message: answering with that one's reply would be wrong.
      this.send(conn, {
        type: 'error',
        code: 'client_id_reused',
        message: `This clientId was already used for a different message: send each new message with a fresh clientId (e.g. a UUID). Re-send the same text with the same clientId only to retry it.`,
        clientId,
      });
      return;
    }
    this.send(conn, { type: 'accepted', clientId, turnId: res.turnId, duplicate: res.duplicate });
    if (res.gate && res.gate !== 'admitted') {
      // Nothing will run for this message: say so against its client id.
      const message =
        res.gate === 'rate_limited' ? 'Too many messages: this one was not processed. Please slow down.' : `This message was not processed (${res.gate}).`;
      this.send(conn, { type: 'error', code: res.gate, message, clientId });
      return;
    }
    if (res.duplicate && res.turnId) {
      // A re-sent id: resend the stored final; a turn still running streams to every socket anyway.
      const finals = [...(await this.ctx!.ledger.begin(res.turnId, this.conversation(auth.principalId))).finals.values()];
      for (const rec of finals) this.sendNow(conn, finalFrame(rec), true);
      // A turn still waiting for an approval: show the request again (the retry may come from a new socket).
      if (finals.length === 0) {
        for (const p of await this.ctx!.approvals.pending(this.conversation(auth.principalId), res.turnId)) this.send(conn, this.requestFrame(p));
      }
    }
  }

  /** The request frame of a pending approval: the live one when this process sent it, else built from the stored approval. */
  private requestFrame(p: PendingApproval): ApprovalRequestFrame {
    return (
      this.requests.get(p.approvalId) ?? {
        type: 'approval_request',
        approvalId: p.approvalId,
        turnId: p.turnId,
        clientId: p.clientId,
        tool: p.tool,
        summary: p.summary,
        expiresAt: p.expiresAt,
        source: p.source,
        ...(p.choices ? { choices: p.choices } : {}),
      }
    );
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
    if (conn.socket.readyState !== conn.socket.OPEN) return;
    try {
      conn.socket.send(JSON.stringify(frame));
    } catch (err) {
      // One broken socket must not stop the frame reaching the principal's other sockets.
      this.ctx?.log.warn({ err, channel: this.id, frame: frame.type }, 'websocket send failed');
    }
  }

  /** Sends a frame to every socket of the principal, here and on the other replicas. */
  private broadcast(principalId: string, frame: ServerFrame): void {
    this.broadcastHere(principalId, frame);
    this.fanout?.send(principalId, [frame]);
  }

  private broadcastHere(principalId: string, frame: ServerFrame): void {
    for (const c of this.conns.get(principalId) ?? []) this.send(c, frame);
  }

  /** Frames another replica broadcast to a principal (its turn runs there): to the sockets here. */
  private fromReplica(principalId: string, frames: readonly unknown[]): void {
    if (this.stopped) return;
    for (const raw of frames) {
      const frame = replicaFrame(raw);
      if (!frame) {
        this.ctx?.log.warn({ channel: this.id }, 'websocket: ignored a malformed frame from another replica');
        continue;
      }
      if (frame.type === 'approval_request') this.remember(frame);
      else if (frame.type === 'approval_resolved') this.requests.delete(frame.approvalId);
      this.broadcastHere(principalId, frame);
    }
  }

  private remember(frame: ApprovalRequestFrame): void {
    if (this.requests.size >= MAX_REMEMBERED_REQUESTS) this.requests.delete(this.requests.keys().next().value ?? '');
    this.requests.set(frame.approvalId, frame);
  }

  /**
   * Streams a turn to every socket of its principal and ends it with the ledgered final (sent
   * once: a final recorded before, e.g. by the process that started a resumed turn, is not sent
   * again). Total: a failed step (the ledger, a socket) is logged and the events are still read
   * to the end; never rejects.
   */
  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const log = this.ctx?.log;
    try {
      const ledger = await this.ctx!.ledger.begin(turnId, to, {
        onReadError: (err) => log?.error({ err, turnId }, 'websocket render: could not read the delivery ledger'),
      });
      for await (const ev of turn) {
        try {
          await this.renderEvent(to.id, turnId, meta.clientId, ledger, ev);
        } catch (err) {
          log?.error({ err, turnId, event: ev.type }, 'websocket render step failed');
        }
      }
    } catch (err) {
      log?.error({ err, turnId }, 'websocket render failed');
    }
  }

  private async renderEvent(principal: string, turnId: string, clientId: string | null, ledger: TurnLedger, ev: TurnEvent): Promise<void> {
    switch (ev.type) {
      case 'text_delta':
        this.broadcast(principal, { type: 'delta', turnId, clientId, text: ev.text });
        return;
      case 'attempt_reset':
        this.broadcast(principal, { type: 'attempt_reset', turnId, clientId });
        return;
      case 'tool_start':
        this.broadcast(principal, { type: 'tool', turnId, clientId, phase: 'start', name: ev.name, toolUseId: ev.toolUseId });
        return;
      case 'tool_progress':
        this.broadcast(principal, {
          type: 'tool',
          turnId,
          clientId,
          phase: 'progress',
          name: ev.name,
          toolUseId: ev.toolUseId,
          message: ev.message,
          ...(ev.lines !== undefined ? { lines: ev.lines } : {}),
          ...(ev.elapsedMs !== undefined ? { elapsedMs: ev.elapsedMs } : {}),
        });
        return;
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
        return;
      case 'approval_requested': {
        const frame: ApprovalRequestFrame = {
          type: 'approval_request',
          approvalId: ev.approvalId,
          turnId,
          clientId,
          tool: ev.name,
          summary: ev.summary,
          expiresAt: ev.expiresAt,
          ...(ev.source ? { source: ev.source } : {}),
          ...(ev.choices ? { choices: ev.choices } : {}),
        };
        this.remember(frame);
        this.broadcast(principal, frame);
        return;
      }
      case 'approval_resolved':
        this.requests.delete(ev.approvalId);
        this.broadcast(principal, { type: 'approval_resolved', approvalId: ev.approvalId, turnId, allowed: ev.allowed, by: ev.by });
        return;
      case 'turn_end': {
        const content = { text: ev.text, state: ev.state, reason: ev.reason, clientId, ...(ev.error ? { error: ev.error } : {}) };
        const { record, existed } = await ledger.recordFinal(0, null, content, { last: true });
        if (!existed) this.broadcast(principal, finalFrame(record));
        return;
      }
      default:
        return;
    }
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    this.broadcast(to.id, { type: 'notice', text });
  }

  /** Shelves a file for download at `GET /files/{id}` and sends a `file` frame to the person's sockets (the `send_file` tool). */
  async sendFile(to: ConversationRef, file: OutboundFile, meta: SendFileMeta): Promise<string> {
    const shelf = this.ctx?.http.files;
    if (!shelf) throw new Error('this gateway offers no file downloads');
    const principalId = meta.principalId ?? to.id;
    const ticket = shelf.put({ principalId, name: file.name, mimeType: file.mimeType, data: file.data });
    const expiresAt = ticket.expiresAt.toISOString();
    // Here only: the file is shelved in this process, so only this replica can serve its URL.
    this.broadcastHere(principalId, {
      type: 'file',
      turnId: meta.turnId,
      fileId: ticket.id,
      name: file.name,
      mimeType: file.mimeType,
      size: ticket.size,
      url: ticket.url,
      expiresAt,
      ...(file.caption ? { caption: file.caption } : {}),
    });
    const live = this.conns.get(principalId)?.size ?? 0;
    return `offered to the WebSocket client as ${file.name}, downloadable until ${expiresAt}${live === 0 ? ' (no client is connected right now)' : ''}`;
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    return { state: 'up', detail: `${this.all.size} connection(s)` };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.unfan?.();
    for (const c of this.all) c.socket.close(1001, 'server shutting down');
  }
}

type ApprovalRequestFrame = Extract<ServerFrame, { type: 'approval_request' }>;

/** Live approval requests remembered for re-sending (oldest forgotten first: then rebuilt from the store). */
const MAX_REMEMBERED_REQUESTS = 1000;

/** The frames another replica may hand this one (what `render` and `notify` broadcast); anything else is dropped. */
const REPLICA_FRAME_TYPES: ReadonlySet<string> = new Set([
  'delta',
  'attempt_reset',
  'tool',
  'approval_request',
  'approval_resolved',
  'final',
  'error',
  'notice',
]);

/** A frame from another replica (read from the shared database), or null when it is not one this channel broadcasts. */
export function replicaFrame(raw: unknown): ServerFrame | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string' || !REPLICA_FRAME_TYPES.has(type)) return null;
  if ((type === 'approval_request' || type === 'approval_resolved') && typeof (raw as { approvalId?: unknown }).approvalId !== 'string') return null;
  if ((type === 'final' || type === 'error') && (raw as { cursor?: unknown }).cursor !== undefined && typeof (raw as { cursor?: unknown }).cursor !== 'number')
    return null;
  return raw as ServerFrame;
}

/** Frames one connection may have waiting to be handled; past it the client is not reading answers. */
const MAX_PENDING_FRAMES = 256;

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

/** The `clientId` of a raw client frame, when it is JSON with a short string one (for an error that answers it). */
function frameClientId(data: RawData): string | undefined {
  try {
    const parsed: unknown = JSON.parse(String(data));
    const id = parsed && typeof parsed === 'object' ? (parsed as { clientId?: unknown }).clientId : undefined;
    return typeof id === 'string' && id.length <= 256 ? id : undefined;
  } catch {
    return undefined;
  }
}
