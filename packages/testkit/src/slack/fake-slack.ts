import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CANARY_SLACK_APP_TOKEN, CANARY_SLACK_BOT_TOKEN, CANARY_SLACK_SIGNING_SECRET } from '../canaries.js';
import { appendRunLog } from '../run-log.js';
import type {
  FakeSlack,
  FakeSlackOptions,
  SlackCall,
  SlackDeliverOptions,
  SlackDeliveryResult,
  SlackFault,
  SlackIdentity,
  SlackSocketAck,
  SlackSocketSendOptions,
} from './fake-slack-types.js';
import { readSlackApiRequest } from './slack-api-request.js';
import { postSigned } from './slack-delivery.js';
import { buildEventCallback, createSlackEventFactory, DEFAULT_SLACK_IDENTITY, type SlackEventFactory } from './slack-events.js';
import { type SlackFileObject, SlackFilesState, type SlackUploadedFile } from './slack-files.js';
import { SlackSocketModeServer } from './slack-socket-server.js';
import { normalizeSlackParams, SlackWebApiState } from './slack-web-api.js';
import { listenLoopback } from '../loopback.js';

type Reply = { status: number; body: unknown; headers?: Record<string, string> };

class FakeSlackServer implements FakeSlack {
  readonly calls: SlackCall[] = [];
  readonly identity: SlackIdentity;
  readonly events: SlackEventFactory;
  url = '';
  apiUrl = '';
  port = 0;
  private readonly server: Server;
  private readonly api: SlackWebApiState;
  private readonly files: SlackFilesState;
  private readonly socket: SlackSocketModeServer;
  private readonly faults = new Map<string, SlackFault[]>();
  private readonly listeners = new Set<() => void>();
  private readonly botTokens: Set<string>;
  private readonly appToken: string;
  private readonly signingSecret: string;
  private readonly source: string;
  private eventSeq = 0;

  constructor(opts: FakeSlackOptions) {
    this.identity = { ...DEFAULT_SLACK_IDENTITY, ...(opts.identity ?? {}) };
    this.events = createSlackEventFactory(this.identity);
    this.botTokens = new Set(opts.botTokens ?? [CANARY_SLACK_BOT_TOKEN]);
    this.appToken = opts.appToken ?? CANARY_SLACK_APP_TOKEN;
    this.signingSecret = opts.signingSecret ?? CANARY_SLACK_SIGNING_SECRET;
    this.source = opts.logSource ?? 'fake-slack';
    this.api = new SlackWebApiState(this.identity);
    this.files = new SlackFilesState(() => this.url, this.identity.teamId);
    this.socket = new SlackSocketModeServer({
      identity: this.identity,
      serverPingIntervalMs: opts.serverPingIntervalMs ?? 0,
      log: (entry) => this.log(entry),
      changed: () => this.changed(),
      waitFor: (fn, t, what) => this.waitFor(fn, t, what),
    });
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.log({ internalError: err instanceof Error ? err.message : String(err) });
        if (!res.headersSent) this.send(res, { status: 500, body: { ok: false, error: 'fatal_error' } });
        else res.destroy();
      });
    });
    this.server.on('upgrade', (req: IncomingMessage, sock, head: Buffer) => this.socket.handleUpgrade(req, sock, head));
  }

  async listen(): Promise<void> {
    this.port = await listenLoopback(this.server);
    this.url = `http://127.0.0.1:${this.port}`;
    this.apiUrl = `${this.url}/api/`;
  }

  get acks(): SlackSocketAck[] {
    return this.socket.acks;
  }
  get ephemerals() {
    return this.api.ephemerals;
  }
  get reactions() {
    return this.api.reactions;
  }

  get uploads(): readonly SlackUploadedFile[] {
    return this.files.uploaded;
  }

  addUserFile(init: { name: string; mimetype?: string; content: string | Uint8Array; title?: string }): SlackFileObject {
    return this.files.addUserFile(init);
  }

  messages(channel?: string, opts: { includeDeleted?: boolean } = {}) {
    return this.api.messages(channel, opts.includeDeleted ?? false);
  }

  callsTo(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  failNext(method: string, fault: SlackFault): void {
    const list = this.faults.get(method) ?? [];
    list.push(fault);
    this.faults.set(method, list);
  }

  waitFor<T>(fn: () => T | undefined | null | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    const first = fn();
    if (first) return Promise.resolve(first);
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const v = fn();
        if (!v) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(v);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`fake-slack: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  async deliverEvent(targetUrl: string, event: Record<string, unknown>, opts: SlackDeliverOptions = {}): Promise<SlackDeliveryResult> {
    const eventId = opts.eventId ?? `Ev0TEST${String(++this.eventSeq).padStart(5, '0')}`;
    const body = JSON.stringify(buildEventCallback(this.identity, event, eventId));
    const res = await this.deliver(targetUrl, body, 'application/json', opts);
    return { ...res, eventId };
  }

  async deliverUrlVerification(targetUrl: string, signingSecret?: string, challenge = `challenge-test-${this.eventSeq + 1}`) {
    const body = JSON.stringify({ token: this.identity.verificationToken, challenge, type: 'url_verification' });
    const res = await this.deliver(targetUrl, body, 'application/json', signingSecret !== undefined ? { signingSecret } : {});
    return { ...res, challenge };
  }

  deliverInteraction(targetUrl: string, payload: Record<string, unknown>, signingSecret?: string, opts: SlackDeliverOptions = {}) {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return this.deliver(targetUrl, body, 'application/x-www-form-urlencoded', signingSecret !== undefined ? { ...opts, signingSecret } : opts);
  }

  socketSend(event: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck> {
    const eventId = `Ev0TEST${String(++this.eventSeq).padStart(5, '0')}`;
    return this.socket.send('events_api', buildEventCallback(this.identity, event, eventId), opts);
  }

  socketSendInteractive(payload: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck> {
    return this.socket.send('interactive', payload, opts);
  }

  socketSendSlashCommand(payload: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck> {
    return this.socket.send('slash_commands', payload, opts);
  }

  socketDisconnect(opts: { reason?: 'refresh_requested' | 'warning' | 'too_many_websockets' } = {}): number {
    return this.socket.disconnect(opts.reason ?? 'refresh_requested');
  }

  makeSocketDeaf(opts?: { answerPings?: boolean; halfOpen?: boolean }): number {
    return this.socket.makeDeaf(opts);
  }

  setHelloDelay(ms: number): void {
    this.socket.setHelloDelay(ms);
  }

  liveSockets(): number {
    return this.socket.liveSockets();
  }

  sockets() {
    return this.socket.sockets();
  }

  socketStats() {
    return this.socket.stats();
  }

  async close(): Promise<void> {
    this.socket.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  /** One run-log line; callers never pass tokens, secrets or signatures. */
  private log(entry: Record<string, unknown>): void {
    appendRunLog(this.source, JSON.stringify({ port: this.port, ...entry }));
  }

  private async deliver(url: string, body: string, contentType: string, opts: SlackDeliverOptions): Promise<SlackDeliveryResult> {
    const res = await postSigned({ url, body, contentType, signingSecret: opts.signingSecret ?? this.signingSecret, opts });
    this.log({
      deliver: url,
      contentType,
      retryNum: opts.retryNum,
      skewSec: opts.timestampSkewSec,
      tampered: opts.tamper !== undefined && opts.tamper !== false,
      status: res.status,
      elapsedMs: res.elapsedMs,
    });
    this.changed();
    return res;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // File downloads (`url_private_download`) and upload URLs are not Web API methods.
    if (await this.files.serve(req, res, (token) => token !== undefined && this.botTokens.has(token))) {
      this.log({ file: (req.url ?? '').split('?')[0], method: req.method, status: res.statusCode });
      this.changed();
      return;
    }
    const { method, rawParams, contentType, token, tooLarge, invalidJson } = await readSlackApiRequest(req);
    const tokenKind: SlackCall['tokenKind'] =
      token === undefined || token === '' ? 'none' : this.botTokens.has(token) ? 'bot' : token === this.appToken ? 'app' : 'unknown';
    const call: SlackCall = { seq: this.calls.length + 1, method, params: normalizeSlackParams(rawParams), tokenKind, contentType, receivedAt: Date.now() };
    if (method === '') return this.reply(res, call, { status: 404, body: { ok: false, error: 'unknown_method' } });
    this.calls.push(call);
    if (method === 'apps.connections.open') this.socket.connectionsOpenCalls++;
    this.changed();
    if (tooLarge) return this.reply(res, call, { status: 413, body: { ok: false, error: 'request_too_large' } });
    if (invalidJson) return this.reply(res, call, { status: 200, body: { ok: false, error: 'invalid_json' } });

    const fault = this.takeFault(method);
    if (fault && 'delayMs' in fault && fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault && 'drop' in fault) {
      this.log({ call: call.seq, method, dropped: true });
      req.socket.destroy();
      return;
    }
    if (fault && 'status' in fault && fault.status === 429) {
      const headers = { 'retry-after': String(fault.retryAfter) };
      return this.reply(res, call, { status: 429, body: { ok: false, error: 'ratelimited' }, headers });
    }
    if (fault && 'status' in fault) return this.reply(res, call, { status: fault.status, body: 'upstream_error' });
    if (fault && 'error' in fault) return this.reply(res, call, { status: 200, body: { ok: false, error: fault.error } });
    return this.reply(res, call, { status: 200, body: this.answer(method, call) });
  }

  private answer(method: string, call: SlackCall): Record<string, unknown> {
    if (call.tokenKind === 'none') return { ok: false, error: 'not_authed' };
    if (call.tokenKind === 'unknown') return { ok: false, error: 'invalid_auth' };
    if (method === 'apps.connections.open') {
      if (call.tokenKind !== 'app') return { ok: false, error: 'not_allowed_token_type' };
      return { ok: true, url: `ws://127.0.0.1:${this.port}/socket?ticket=${this.socket.issueTicket()}&app_id=${this.identity.appId}` };
    }
    if (call.tokenKind !== 'bot') return { ok: false, error: 'not_allowed_token_type' };
    return this.files.handle(method, call.params) ?? this.api.handle(method, call.params) ?? { ok: false, error: 'unknown_method', req_method: method };
  }

  private takeFault(method: string): SlackFault | undefined {
    for (const key of [method, '*']) {
      const list = this.faults.get(key);
      if (list && list.length > 0) return list.shift();
    }
    return undefined;
  }

  private reply(res: ServerResponse, call: SlackCall | undefined, r: Reply): void {
    const ok = typeof r.body === 'object' && r.body !== null ? (r.body as { ok?: boolean }).ok === true : false;
    const error = typeof r.body === 'object' && r.body !== null ? (r.body as { error?: string }).error : undefined;
    if (call) {
      call.status = r.status;
      call.ok = ok;
      if (error !== undefined) call.error = error;
    }
    this.log({ call: call?.seq, method: call?.method, tokenKind: call?.tokenKind, params: call?.params, status: r.status, ok, error });
    this.send(res, r);
    this.changed();
  }

  private send(res: ServerResponse, r: Reply): void {
    const isText = typeof r.body === 'string';
    const text = isText ? (r.body as string) : JSON.stringify(r.body);
    res.writeHead(r.status, {
      ...(r.headers ?? {}),
      'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }
}

/** Starts a fake Slack (Web API at `apiUrl`, Socket Mode WebSocket, signed Events API deliveries) on 127.0.0.1 with a free port. */
export async function startFakeSlack(opts: FakeSlackOptions = {}): Promise<FakeSlack> {
  const fake = new FakeSlackServer(opts);
  await fake.listen();
  return fake;
}
