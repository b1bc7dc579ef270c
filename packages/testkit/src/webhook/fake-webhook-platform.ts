import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { CANARY_WEBHOOK_SECRET } from '../canaries.js';
import type { ReceivedCallback, SentRequest, WebhookMessage, WebhookPlatformOptions, WebhookSendOptions, WebhookSendResult } from './fake-webhook-types.js';
import { signWebhookRequest, verifyWebhookSignature } from './webhook-signing.js';
import { listenLoopback } from '../loopback.js';
import { readResponse } from '../gateway-client.js';

/** A loopback stand-in for a platform that uses Switchboard's generic webhook channel. */
export interface WebhookPlatform {
  /** `http://127.0.0.1:PORT/callback`: put it in the account's `callbackUrl`. */
  readonly callbackUrl: string;
  readonly account: string;
  /** Every callback received, in arrival order (failed answers included). */
  readonly callbacks: ReceivedCallback[];
  /** The first callback (received so far or later) matching `match`; rejects after `timeoutMs` (default 10 000). */
  waitFor(match: (c: ReceivedCallback) => boolean, timeoutMs?: number): Promise<ReceivedCallback>;
  /** Resolves once `n` callbacks match; rejects after `timeoutMs`. */
  waitForCount(match: (c: ReceivedCallback) => boolean, n: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  /** Answers the next `n` callbacks with `status` (a failing platform), then 200 again. */
  failNext(n: number, status?: number): void;
  /** A DM payload from `senderId` with a fresh message id (`extra` is merged over it). */
  dm(senderId: string, text: string, extra?: Partial<WebhookMessage>): WebhookMessage;
  /** Signs and POSTs a message to `<gw>/channels/webhook/<account>`. */
  send(gw: { url: string }, message: WebhookMessage | Record<string, unknown>, opts?: WebhookSendOptions): Promise<WebhookSendResult>;
  /** Signs and POSTs an approval decision to `<gw>/channels/webhook/<account>/approvals/<id>`. */
  decide(gw: { url: string }, approvalId: string, body: Record<string, unknown>, opts?: WebhookSendOptions): Promise<WebhookSendResult>;
  /** The last request `send` or `decide` made, exactly as sent (what an eavesdropper could capture). */
  readonly lastRequest: SentRequest | null;
  /** Sends a captured request again, byte for byte (headers and body), to `url` (default: its own URL). */
  replay(req: SentRequest, url?: string): Promise<WebhookSendResult>;
  close(): Promise<void>;
}

type Waiter = { match: (c: ReceivedCallback) => boolean; n: number; resolve(v: ReceivedCallback[]): void };

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

class FakeWebhookPlatform implements WebhookPlatform {
  readonly callbacks: ReceivedCallback[] = [];
  readonly account: string;
  callbackUrl = '';
  private readonly secret: string;
  private readonly waiters = new Set<Waiter>();
  private failures: { n: number; status: number } = { n: 0, status: 500 };
  private seq = 0;
  private msgSeq = 0;
  lastRequest: SentRequest | null = null;
  readonly server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));

  constructor(opts: WebhookPlatformOptions) {
    this.secret = opts.secret ?? CANARY_WEBHOOK_SECRET;
    this.account = opts.account ?? 'main';
  }

  async listen(): Promise<void> {
    this.callbackUrl = `http://127.0.0.1:${await listenLoopback(this.server)}/callback`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
    const verified = verifyWebhookSignature(
      this.secret,
      header('x-switchboard-timestamp'),
      header('x-switchboard-signature'),
      req.method,
      (req.url ?? '').split('?')[0]!,
      raw,
    );
    let body: ReceivedCallback['body'] = {};
    try {
      body = JSON.parse(raw.toString('utf8')) as ReceivedCallback['body'];
    } catch {
      // recorded as received; the test asserts on rawBody
    }
    let status = verified ? 200 : 401;
    if (verified && this.failures.n > 0) {
      this.failures.n--;
      status = this.failures.status;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = k === 'x-switchboard-signature' ? '[checked]' : v;
    const cb: ReceivedCallback = { seq: ++this.seq, receivedAt: Date.now(), body, rawBody: raw.toString('utf8'), headers, verified, status };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(status === 200 ? { ok: true, messageId: `pm-${cb.seq}` } : { ok: false }));
    this.callbacks.push(cb);
    for (const w of [...this.waiters]) {
      const hits = this.callbacks.filter(w.match);
      if (hits.length >= w.n) {
        this.waiters.delete(w);
        w.resolve(hits);
      }
    }
  }

  waitFor(match: (c: ReceivedCallback) => boolean, timeoutMs = 10_000): Promise<ReceivedCallback> {
    return this.waitForCount(match, 1, timeoutMs).then((hits) => hits[0]!);
  }

  waitForCount(match: (c: ReceivedCallback) => boolean, n: number, timeoutMs = 10_000): Promise<ReceivedCallback[]> {
    const hits = this.callbacks.filter(match);
    if (hits.length >= n) return Promise.resolve(hits);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        const seen = this.callbacks.map((c) => `${c.status} ${c.rawBody.slice(0, 200)}`).join('\n  ');
        reject(new Error(`webhook platform: ${n} matching callback(s) not received within ${timeoutMs} ms; received:\n  ${seen}`));
      }, timeoutMs);
      const w: Waiter = {
        match,
        n,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
      };
      this.waiters.add(w);
    });
  }

  failNext(n: number, status = 500): void {
    this.failures = { n, status };
  }

  dm(senderId: string, text: string, extra: Partial<WebhookMessage> = {}): WebhookMessage {
    return { id: `m-${process.pid}-${++this.msgSeq}`, sender: { id: senderId }, conversation: { id: `dm-${senderId}`, kind: 'dm' }, text, ...extra };
  }

  send(gw: { url: string }, message: WebhookMessage | Record<string, unknown>, opts: WebhookSendOptions = {}): Promise<WebhookSendResult> {
    return this.post(`${gw.url}/channels/webhook/${this.account}`, message, opts);
  }

  decide(gw: { url: string }, approvalId: string, body: Record<string, unknown>, opts: WebhookSendOptions = {}): Promise<WebhookSendResult> {
    return this.post(`${gw.url}/channels/webhook/${this.account}/approvals/${encodeURIComponent(approvalId)}`, body, opts);
  }

  private async post(url: string, payload: unknown, opts: WebhookSendOptions): Promise<WebhookSendResult> {
    const signed = opts.rawBody ?? JSON.stringify(payload);
    const ts = Math.floor(Date.now() / 1000) + (opts.timestampSkewSec ?? 0);
    const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
    if (!opts.unsigned) {
      headers['x-switchboard-timestamp'] = String(ts);
      headers['x-switchboard-signature'] = opts.signature ?? signWebhookRequest(opts.secret ?? this.secret, ts, 'POST', new URL(url).pathname, signed);
    }
    const sent: SentRequest = { url, method: 'POST', headers: { ...headers, ...(opts.headers ?? {}) }, body: opts.tamper ? opts.tamper(signed) : signed };
    this.lastRequest = sent;
    return this.replay(sent);
  }

  async replay(req: SentRequest, url: string = req.url): Promise<WebhookSendResult> {
    const res = await fetch(url, { method: req.method, headers: req.headers, body: req.body });
    return { status: res.status, ...(await readResponse(res)) };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Starts a loopback platform: it signs the messages it sends and checks the signatures of the callbacks it receives. */
export async function startWebhookPlatform(opts: WebhookPlatformOptions = {}): Promise<WebhookPlatform> {
  const p = new FakeWebhookPlatform(opts);
  await p.listen();
  return p;
}
