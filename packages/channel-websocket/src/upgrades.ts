import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';

/** An upgrade refused before the handshake: the HTTP answer, as `{ code, message }` JSON. */
export interface UpgradeRefusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

/** An upgrade let through: who it is (null until a hello authenticates it) and its client key. */
export interface UpgradeAdmission {
  auth: { principalId: string; tokenId: string; sessionId?: string } | null;
  address: string;
  /** Frees the unauthenticated slot reserved for it (idempotent). */
  release?: () => void;
}

/** One account's end of the upgrade handler (a WebSocket channel account). */
export interface UpgradeTarget {
  /** The URL path its clients connect to. */
  readonly path: string;
  /** The server authenticated upgrades complete on (the account's `maxPayload`). */
  readonly authenticatedServer: WebSocketServer;
  /** The server every other upgrade completes on (64 KiB, or less if the account's `maxPayload` is less). */
  readonly unauthenticatedServer: WebSocketServer;
  /** Checks an upgrade; any reservation it makes must be released when `socket` closes. */
  admit(req: IncomingMessage, socket: Duplex): Promise<UpgradeRefusal | UpgradeAdmission>;
  /** A handshake completed on the raw `socket`. */
  connected(ws: WebSocket, admission: UpgradeAdmission, socket: Duplex): void;
  /** Logs a failure of the handler itself (the client got a 500). */
  failed(err: unknown): void;
}

/** Hands an upgrade request the gateway does not upgrade to the HTTP server as a normal request (closed after the answer). */
function asPlainRequest(server: Server, req: IncomingMessage, socket: Duplex): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  server.emit('request', req, res);
}

/** Writes an HTTP answer on a socket that asked for an upgrade, and closes it. */
export function refuseUpgrade(socket: Duplex, r: UpgradeRefusal): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ code: r.code, message: r.message });
  const extra = Object.entries(r.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${r.status} ${STATUS_CODES[r.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extra}\r\n${body}`,
  );
  socket.once('finish', () => socket.destroy());
}

/**
 * The one upgrade handler of the WebSocket channel: every account registers its path here, and
 * the HTTP server's `upgrade` event is handled once. `ws` fixes `maxPayload` per server at the
 * handshake, so an upgrade that carried a valid token completes on its account's server, and
 * every other one on the account's unauthenticated server, limited to 64 KiB for the
 * connection's whole life: a stranger can never make the gateway buffer more than that per socket.
 */
export class WebsocketUpgrades {
  private readonly targets = new Map<string, UpgradeTarget>();
  private readonly servers = new WeakSet<Server>();

  /** Routes upgrades for `target.path` to `target`. */
  add(target: UpgradeTarget): void {
    if (this.targets.has(target.path)) throw new Error(`two WebSocket accounts on ${target.path}`);
    this.targets.set(target.path, target);
  }

  /** Listens for upgrades on `server` (once per server, however many accounts call it). */
  install(server: Server): void {
    if (this.servers.has(server)) return;
    this.servers.add(server);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(server, req, socket, head));
  }

  private onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A client may vanish while its token is checked: that must not be an unhandled error.
    const ignore = () => undefined;
    socket.on('error', ignore);
    const path = (req.url ?? '/').split('?')[0]!;
    const target = this.targets.get(path);
    // Not a WebSocket upgrade of ours (e.g. curl's `Upgrade: h2c`): an ordinary HTTP request.
    if (!target || req.headers.upgrade?.toLowerCase() !== 'websocket') {
      asPlainRequest(server, req, socket);
      return;
    }
    target.admit(req, socket).then(
      (verdict) => {
        if ('status' in verdict) return refuseUpgrade(socket, verdict);
        if (socket.destroyed) return;
        socket.off('error', ignore);
        const server = verdict.auth ? target.authenticatedServer : target.unauthenticatedServer;
        server.handleUpgrade(req, socket, head, (ws) => target.connected(ws, verdict, socket));
      },
      (err: unknown) => {
        target.failed(err);
        refuseUpgrade(socket, { status: 500, code: 'internal', message: 'The gateway could not handle this upgrade.' });
      },
    );
  }
}
