import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';

/** A received frame: parsed JSON, or `{ raw }` when the frame was not JSON. */
// biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
export type WsFrame = { type?: string; raw?: string } & Record<string, any>;

/** Options for `connectWs`. */
export interface ConnectWsOptions {
  headers?: Record<string, string>;
  /** Sent as the `Origin` header (omitted by default, like a non-browser client). */
  origin?: string;
  protocols?: string | string[];
  /** Rejects if the handshake has not finished in this time (default 10 000 ms). */
  timeoutMs?: number;
  /** Max incoming message size in bytes (ws default when omitted). */
  maxPayload?: number;
}

/** Rejection of `connectWs` when the server answered the upgrade with a non-101 response. */
export class WsHandshakeError extends Error {
  constructor(
    readonly status: number | undefined,
    readonly headers: IncomingHttpHeaders,
    readonly body: string,
  ) {
    super(`WebSocket handshake refused${status !== undefined ? ` with HTTP ${status}` : ''}`);
    this.name = 'WsHandshakeError';
  }
}

/** A test WebSocket client: every frame is parsed and queued; `next()` takes frames in order. */
export interface WsClient {
  readonly ws: WebSocket;
  /** Every frame received so far, in order (consumed or not). */
  readonly frames: WsFrame[];
  /** Sends `obj` as JSON text. */
  send(obj: unknown): void;
  /** Sends a raw text or binary frame. */
  sendRaw(data: string | Buffer): void;
  /**
   * Takes the oldest not-yet-taken frame matching `predicate` (any frame by default), waiting
   * for one if needed. Non-matching frames stay queued for later calls. Rejects on timeout
   * (default 10 000 ms) or when the socket closes first.
   */
  next(predicate?: (frame: WsFrame) => boolean, timeoutMs?: number): Promise<WsFrame>;
  /** Resolves with the close code and reason (immediately if already closed). */
  waitClose(timeoutMs?: number): Promise<{ code: number; reason: string }>;
  /** Closes (default code 1000) and waits for the close handshake or the socket's end. */
  close(code?: number, reason?: string): Promise<{ code: number; reason: string }>;
}

function parseFrame(data: WebSocket.RawData): WsFrame {
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as WsFrame) : { raw: text, value: v };
  } catch {
    return { raw: text };
  }
}

/**
 * Connects a test WebSocket client. Resolves on open; rejects with a `WsHandshakeError`
 * carrying `status` (from ws's `'unexpected-response'`) when the server refuses the upgrade,
 * so tests can assert 401/403/426 before the 101.
 */
export function connectWs(url: string, opts: ConnectWsOptions = {}): Promise<WsClient> {
  const ws = new WebSocket(url, opts.protocols, {
    headers: opts.headers ?? {},
    ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
    ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
  });
  const frames: WsFrame[] = [];
  const pending: WsFrame[] = [];
  const listeners = new Set<() => void>();
  let closeInfo: { code: number; reason: string } | undefined;
  const changed = () => {
    for (const l of [...listeners]) l();
  };
  ws.on('message', (data) => {
    const frame = parseFrame(data);
    frames.push(frame);
    pending.push(frame);
    changed();
  });
  ws.on('close', (code, reason) => {
    closeInfo = { code, reason: reason.toString('utf8') };
    changed();
  });

  /** Waits until `take()` returns a value; rejects on timeout or when `failIfClosed` and closed. */
  const waitFor = <T>(take: () => T | undefined, timeoutMs: number, what: string, failIfClosed: boolean): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const v = take();
        if (v !== undefined) {
          done();
          resolve(v);
        } else if (failIfClosed && closeInfo) {
          done();
          reject(new Error(`ws-client: socket closed (${closeInfo.code} ${closeInfo.reason}) while waiting for ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`ws-client: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  const client: WsClient = {
    ws,
    frames,
    send: (obj) => ws.send(JSON.stringify(obj)),
    sendRaw: (data) => ws.send(data),
    next: (predicate = () => true, timeoutMs = 10_000) =>
      waitFor(
        () => {
          const i = pending.findIndex(predicate);
          return i < 0 ? undefined : pending.splice(i, 1)[0];
        },
        timeoutMs,
        'a matching frame',
        true,
      ),
    waitClose: (timeoutMs = 10_000) => waitFor(() => closeInfo, timeoutMs, 'close', false),
    close: (code = 1000, reason = '') => {
      if (!closeInfo && ws.readyState !== WebSocket.CLOSING && ws.readyState !== WebSocket.CLOSED) ws.close(code, reason);
      return waitFor(() => closeInfo, 10_000, 'close', false);
    },
  };

  return new Promise<WsClient>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`ws-client: handshake with ${url} timed out`));
    }, opts.timeoutMs ?? 10_000);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve(client);
    });
    ws.once('unexpected-response', (req, res) => {
      clearTimeout(timer);
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const finish = () => {
        req.destroy();
        reject(new WsHandshakeError(res.statusCode, res.headers, Buffer.concat(chunks).toString('utf8')));
      };
      res.once('end', finish);
      res.once('error', finish);
      res.once('aborted', finish);
    });
    // A persistent listener: ws may emit several errors (e.g. after a refused upgrade).
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
