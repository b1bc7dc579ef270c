import { type ChatFrame, parseFrame } from './chat-frames';

/** What the chat socket tells the page. */
export interface ChatSocketEvents {
  onFrame(frame: ChatFrame): void;
  /** `open`: authenticated (hello_ok); `connecting`: (re)connecting; `closed`: given up (`reason` says why). */
  onStatus(status: 'connecting' | 'open' | 'closed', reason?: string): void;
  /** The highest cursor seen, for the `hello` after a reconnect. */
  cursor(): number;
  /** Called after a socket opened again (not the first time): the page refetches its history. */
  onReconnected(): void;
  /**
   * A socket closed before it authenticated (the upgrade was refused, or the gateway is away) or
   * was closed for policy (1008: signed out, token revoked): the page checks its console session,
   * which ends the page when the session is gone instead of retrying for ever.
   */
  checkSession(): void;
}

/** Reconnect delays: the first retry after `minDelayMs`, doubling up to `maxDelayMs`. */
export interface ChatSocketOptions {
  minDelayMs?: number;
  maxDelayMs?: number;
  /** The socket URL (default: `/ws` on the page's own origin). */
  url?: string;
  /** Test seam: the WebSocket constructor. */
  WebSocketImpl?: typeof WebSocket;
}

/** Close codes after which retrying cannot help: the session or the token is gone. */
const FINAL_CLOSE = new Set([1008]);

/** `ws(s)://<this origin>/ws`: the page's own origin, never an address from the URL. */
export function ownSocketUrl(loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  return `${loc.protocol === 'https:' ? 'wss:' : 'ws:'}//${loc.host}/ws`;
}

/**
 * The web chat's connection to the `default` WebSocket account. It authenticates at the upgrade
 * with the console session cookie (the browser sends it; no token is held in page JavaScript),
 * reconnects with backoff, and after a reconnect asks for every final after the last cursor seen
 * (`hello` with `cursor`), which also re-sends the approvals still waiting.
 */
export class ChatSocket {
  private ws: WebSocket | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private delay: number;
  private stopped = false;
  private opened = false;
  private readonly min: number;
  private readonly max: number;
  private readonly url: string;
  private readonly Impl: typeof WebSocket;

  constructor(
    private readonly events: ChatSocketEvents,
    opts: ChatSocketOptions = {},
  ) {
    this.min = opts.minDelayMs ?? 500;
    this.max = opts.maxDelayMs ?? 10_000;
    this.delay = this.min;
    this.url = opts.url ?? ownSocketUrl();
    this.Impl = opts.WebSocketImpl ?? WebSocket;
  }

  /** Opens the socket (once; later calls do nothing while it runs). */
  start(): void {
    this.stopped = false;
    if (!this.ws && !this.timer) this.connect();
  }

  /** Closes for good (page left or signed out). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ws?.close(1000, 'page closed');
    this.ws = null;
  }

  /** Sends a client frame; false when the socket is not open (the page says so and keeps the input). */
  send(frame: Record<string, unknown>): boolean {
    if (!this.ws || this.ws.readyState !== this.Impl.OPEN) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  private connect(): void {
    this.timer = null;
    this.events.onStatus('connecting');
    const ws = new this.Impl(this.url);
    this.ws = ws;
    let authed = false;
    ws.onmessage = (ev: MessageEvent) => {
      if (typeof ev.data !== 'string') return;
      const frame = parseFrame(ev.data);
      if (!frame) return;
      if (frame.type === 'hello_ok' && !authed) {
        authed = true;
        this.delay = this.min;
        this.events.onStatus('open');
        // The upgrade authenticated the socket; a `hello` with the cursor replays the finals missed
        // since, then re-sends every approval still waiting for this person.
        ws.send(JSON.stringify({ type: 'hello', cursor: this.events.cursor() }));
        if (this.opened) this.events.onReconnected();
        this.opened = true;
        return;
      }
      this.events.onFrame(frame);
    };
    ws.onclose = (ev: CloseEvent) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (!authed || FINAL_CLOSE.has(ev.code)) this.events.checkSession();
      if (FINAL_CLOSE.has(ev.code)) {
        this.events.onStatus('closed', ev.reason || 'the gateway closed the chat');
        return;
      }
      this.events.onStatus('connecting');
      this.timer = setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.max, this.delay * 2);
    };
  }
}
