import diagnostics from 'node:diagnostics_channel';
import { SocketModeClient } from '@slack/socket-mode';
import type { ChannelHealth } from '@switchboard/core';
import type { Logger } from 'pino';
import { describeSlackError, hostOf, type SlackFailure } from './slack-errors.js';
import type { Refusal } from './refusal.js';
import { slackLogger, webClientOptions } from './web.js';

/** One Socket Mode envelope (events_api, interactive, slash_commands). */
export interface SocketEnvelope {
  type: string;
  envelopeId: string;
  body: Record<string, unknown>;
  retryNum: number | undefined;
  /** Acknowledges the envelope; `payload` answers a slash command. Never throws. */
  ack(payload?: Record<string, unknown>): Promise<void>;
}

/** Options for {@link SocketModeConnection}. */
export interface SocketConnectionOptions {
  appToken: string;
  apiUrl: string;
  clientPingTimeout: number;
  livenessTimeout: number;
  reconnectBackoffMax: number;
  apiTimeout: number;
  /** After Slack refused the app token (invalid_auth…): wait this long before trying again. */
  refusedRetryInterval: number;
  /** The health detail and log fields for a refused app token (names the config key and its variable). */
  refused(code: string, retryInMs: number): Refusal;
  /** Aborted on stop: cancels apps.connections.open in flight and its retries. */
  signal: AbortSignal;
  log: Logger;
  /** Handles one envelope; acks are the handler's job (after the inbox write). Must not throw. */
  onEnvelope(env: SocketEnvelope): Promise<void>;
}

interface SdkEvent {
  type: string;
  envelope_id: string;
  body: Record<string, unknown>;
  retry_num?: number;
  ack(payload?: Record<string, unknown>): Promise<void>;
}

/** How one connection ended; `lastedMs` counts from hello. */
type Outcome = { connected: boolean; reason: string; lastedMs: number; failure?: SlackFailure };

const pingChannel = diagnostics.channel('undici:websocket:ping');
const pongChannel = diagnostics.channel('undici:websocket:pong');

/** The undici WebSocket under a client (SDK 3.1 keeps it in a private field), to match ping/pong diagnostics to this socket. */
function socketOf(client: SocketModeClient | null): object | null {
  return (client?.websocket as unknown as { websocket?: object | null } | undefined)?.websocket ?? null;
}

/**
 * Socket Mode with its failure modes handled: one SocketModeClient per connection with the SDK's
 * auto-reconnect off (its reconnect races `disconnect()` and can leave a zombie socket), a bounded
 * exponential backoff, at most one live socket (the next one is opened only after the last one is
 * closed), a hello deadline, and a liveness watchdog: connected but no envelope, no server ping and
 * (until the server has pinged) no pong for `livenessTimeout` means deaf → reconnect.
 */
export class SocketModeConnection {
  private stopped = false;
  private client: SocketModeClient | null = null;
  private health: ChannelHealth = { state: 'starting', detail: 'socket mode: not started' };
  private everUp = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private endSession: ((reason: string) => void) | null = null;
  private lastAlive = 0;
  private serverPinged = false;
  private connections = 0;
  private readonly onPing = (m: unknown) => this.pinged(m, true);
  private readonly onPong = (m: unknown) => this.pinged(m, false);

  constructor(private readonly options: SocketConnectionOptions) {}

  status(): ChannelHealth {
    return this.stopped ? { state: 'down', detail: 'stopped' } : this.health;
  }

  /** Starts connecting in the background (never waits for Slack); health says `starting` until the first hello. */
  start(): void {
    if (this.loop || this.stopped) return;
    pingChannel.subscribe(this.onPing);
    pongChannel.subscribe(this.onPong);
    this.loop = this.run();
  }

  /** Closes the socket and stops reconnecting; idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return this.loop ?? undefined;
    this.stopped = true;
    this.wake?.();
    this.endSession?.('stopping');
    await this.loop;
    pingChannel.unsubscribe(this.onPing);
    pongChannel.unsubscribe(this.onPong);
  }

  private set(state: ChannelHealth['state'], detail: string): void {
    // Until the first hello the account is starting, however often it retries.
    this.health = { state: state === 'down' && !this.everUp ? 'starting' : state, detail };
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const outcome = await this.session().catch((err: unknown): Outcome => {
        const failure = describeSlackError(err, this.options.apiTimeout);
        return { connected: false, reason: `failed: ${failure.cause ?? failure.code}`, lastedMs: 0, failure };
      });
      if (this.stopped) break;
      // A socket that is dropped right after hello counts as a failure too, so a flapping peer backs off.
      failures = outcome.connected && outcome.lastedMs >= this.options.livenessTimeout ? 0 : failures + 1;
      let delay = this.backoff(failures);
      if (outcome.failure?.kind === 'permanent') {
        delay = this.options.refusedRetryInterval;
        const r = this.options.refused(outcome.failure.code, delay);
        this.health = { state: 'down', detail: r.detail };
        this.options.log.error({ call: 'apps.connections.open', ...r.fields }, 'slack account down');
      } else if (outcome.failure?.kind === 'network') {
        this.set('down', `socket mode: apps.connections.open: ${outcome.failure.cause} (${hostOf(this.options.apiUrl)}); retry ${failures} in ${delay} ms`);
        this.options.log.warn(
          { call: 'apps.connections.open', host: hostOf(this.options.apiUrl), cause: outcome.failure.cause, attempt: failures, retryInMs: delay },
          'slack unreachable',
        );
      } else {
        this.set('down', `socket mode: ${outcome.reason}; reconnecting in ${delay} ms`);
        this.options.log.warn({ reason: outcome.reason, delayMs: delay, failures }, 'slack socket closed; reconnecting');
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
    this.set('down', 'stopped');
  }

  /** After a connection that was healthy for a while: quickly; after failures: exponential, jittered, capped. */
  private backoff(failures: number): number {
    const base = failures === 0 ? 250 : Math.min(this.options.reconnectBackoffMax, 500 * 2 ** (failures - 1));
    return Math.max(100, Math.round(Math.min(base, this.options.reconnectBackoffMax) * (0.5 + Math.random() / 2)));
  }

  /** One client from apps.connections.open to a fully closed socket. */
  private async session(): Promise<Outcome> {
    const { options } = this;
    const client = new SocketModeClient({
      appToken: options.appToken,
      logger: slackLogger(options.log),
      autoReconnectEnabled: false,
      clientPingTimeout: options.clientPingTimeout,
      // Always explicit: the SDK would otherwise set (and mutate our options to) 100 retries.
      // The outbound policy of every Web API call: bounded retries, host and cause logged, cancelled on stop.
      clientOptions: (({ logger: _l, ...rest }) => rest)(
        webClientOptions({ apiUrl: options.apiUrl, retries: 0, timeoutMs: options.apiTimeout, log: options.log, signal: options.signal }),
      ),
    });
    this.client = client;
    let abandoned = false;
    let connected = false;
    let connectedAt = 0;
    const ended = new Promise<string>((resolve) => {
      this.endSession = resolve;
      client.on('disconnected', () => resolve(connected ? 'socket closed' : 'connection failed'));
    });
    // A socket that opens after we gave up on it (the URL came late) is closed at once.
    client.on('connecting', () => {
      this.set('down', 'socket mode: connecting');
      if (abandoned) setImmediate(() => void client.disconnect().catch(() => undefined));
    });
    client.on('connected', () => {
      if (abandoned) return void client.disconnect().catch(() => undefined);
      connected = true;
      connectedAt = Date.now();
      this.connections++;
      this.lastAlive = Date.now();
      this.serverPinged = false;
      this.everUp = true;
      this.set('up', `socket mode: connected (connection ${this.connections})`);
      options.log.info({ connection: this.connections }, 'slack socket connected');
    });
    client.on('ws_message', () => (this.lastAlive = Date.now()));
    client.on('slack_event', (e: SdkEvent) => void this.dispatch(e));
    let openFailure: SlackFailure | undefined;
    const started = client.start().then(
      () => null,
      (err: unknown) => {
        if (err === undefined) return 'connection closed before hello';
        openFailure = describeSlackError(err, options.apiTimeout);
        return `apps.connections.open failed: ${openFailure.cause ?? openFailure.code}`;
      },
    );
    let watchdog: NodeJS.Timeout | undefined;
    let helloTimer: NodeJS.Timeout | undefined;
    try {
      const hello = new Promise<string>((resolve) => {
        client.on('connecting', () => (helloTimer = setTimeout(() => resolve('no hello in time'), options.livenessTimeout)));
      });
      const first = await Promise.race([started, ended, hello]);
      if (first !== null || this.stopped)
        return { connected: false, reason: first ?? 'stopping', lastedMs: 0, ...(openFailure ? { failure: openFailure } : {}) };
      const every = Math.max(200, Math.min(1000, Math.floor(options.livenessTimeout / 4)));
      watchdog = setInterval(() => {
        const silent = Date.now() - this.lastAlive;
        if (silent <= options.livenessTimeout) return;
        this.set('down', `socket mode: deaf for ${silent} ms; reconnecting`);
        options.log.warn({ silentMs: silent }, 'slack socket unhealthy: no envelope, ping or pong; reconnecting');
        this.endSession?.(`deaf for ${silent} ms`);
      }, every);
      const reason = await ended;
      return { connected: true, reason, lastedMs: Date.now() - connectedAt };
    } finally {
      abandoned = true;
      clearInterval(watchdog);
      clearTimeout(helloTimer);
      await this.close(client, started);
      this.client = null;
      this.endSession = null;
    }
  }

  /** Disconnects and waits until the socket is gone (forcing it after a grace period), so the next one can open. */
  private async close(client: SocketModeClient, started: Promise<string | null>): Promise<void> {
    const gone = new Promise<void>((resolve) => client.once('disconnected', () => resolve()));
    // disconnect() can reject when it races the SDK's own close; nothing more to do then.
    void client.disconnect().catch(() => undefined);
    const force = setTimeout(() => void client.disconnect().catch(() => undefined), 1000);
    let timer: NodeJS.Timeout | undefined;
    // Stopping waits briefly: the process is about to exit and must stay within its shutdown grace.
    const timedOut = new Promise<boolean>((r) => (timer = setTimeout(() => r(true), this.stopped ? 1000 : 30_000)));
    const late = await Promise.race([Promise.all([gone, started]).then(() => false), timedOut]);
    clearTimeout(force);
    clearTimeout(timer);
    if (late) this.options.log.error(this.stopped ? 'slack socket did not close within 1 s of stop; abandoned' : 'slack socket did not close within 30 s');
  }

  private pinged(m: unknown, fromServer: boolean): void {
    const ws = socketOf(this.client);
    if (!ws || (m as { websocket?: unknown }).websocket !== ws) return;
    // Once the server pings, only its pings prove liveness: a socket can pong and still deliver nothing.
    if (fromServer) this.serverPinged = true;
    if (fromServer || !this.serverPinged) this.lastAlive = Date.now();
  }

  private async dispatch(e: SdkEvent): Promise<void> {
    this.lastAlive = Date.now();
    if (this.stopped) return;
    const ack = async (payload?: Record<string, unknown>) => {
      await e.ack(payload).catch((err: unknown) => this.options.log.warn({ err: String(err), envelopeId: e.envelope_id }, 'slack envelope ack failed'));
    };
    await this.options.onEnvelope({ type: e.type, envelopeId: e.envelope_id, body: e.body ?? {}, retryNum: e.retry_num, ack });
  }
}
