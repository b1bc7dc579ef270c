import type { WebClient } from '@slack/web-api';
import type { OutboundFile } from '@switchboard/agent';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ExclusiveReceiver,
  Channel,
  ChannelContext,
  ChannelFactoryDeps,
  ChannelHealth,
  ConfigSource,
  ConversationRef,
  FaultBoundary,
  InboundMessage,
  RenderMeta,
  TurnEvent,
} from '@switchboard/core';
import { SwbError, SwbErrorCode } from '@switchboard/core';
import type { Logger } from 'pino';
import type { SlackAccountConfig } from './account.js';
import { AnsweredThreads } from './answered-threads.js';
import { ApprovalBoard } from './approval-board.js';
import { describeSlackFiles, type SlackFileSource, slackInboundFile, uploadSlackFile } from './files.js';
import { slackHttpRoutes, slackPaths } from './http-receiver.js';
import { mapMessageEvent, parseMessageEvent, type SlackSelf } from './inbound.js';
import { handleBlockActions, runSlashCommand, type InteractionDeps } from './interactions.js';
import { chunkMrkdwn, escapeMrkdwn, SLACK_CHUNK_LIMIT } from './mrkdwn.js';
import { RecentKeys } from './recent-keys.js';
import { SocketModeConnection, type SocketEnvelope } from './socket-connection.js';
import { TurnRender } from './turn-render.js';
import { UserNames } from './user-names.js';
import { refusal, type Refusal } from './refusal.js';
import { describeSlackError, hostOf } from './slack-errors.js';
import { slackFaultBoundary } from './slack-faults.js';
import { createWebClient } from './web.js';

/** How long stop waits for in-flight work after cancelling it, so the gateway stays within its shutdown grace. */
const STOP_WAIT_MS = 1000;
/** Longest an event waits for auth.test before it is refused for redelivery (Slack gives up after 3 s). */
const IDENTIFY_WAIT_MS = 2500;

/**
 * One Slack workspace app: Events API over the gateway's HTTP server or Socket Mode, inbound
 * events durably accepted before they are acknowledged, replies streamed into a draft and
 * finished in ledgered chunks, approvals as Block Kit buttons.
 */
export class SlackChannel implements Channel {
  readonly type = 'slack';
  readonly id: string;
  readonly required: boolean;
  readonly capabilities = { threads: true, edits: true, buttons: true, maxText: SLACK_CHUNK_LIMIT };
  private ctx: ChannelContext | null = null;
  private api: WebClient | null = null;
  private drafts: WebClient | null = null;
  private names: UserNames | null = null;
  private self: SlackSelf | null = null;
  private identity: { ok: boolean; detail: string } = { ok: false, detail: 'auth.test: connecting' };
  private refused: Refusal | null = null;
  private readonly abort = new AbortController();
  private connecting: Promise<void> | null = null;
  private markIdentified: () => void = () => undefined;
  /** Resolves once auth.test said who the bot is (events need it to see mentions and the bot's own messages). */
  private readonly identified = new Promise<void>((r) => (this.markIdentified = r));
  private readonly faults: FaultBoundary;
  private readonly source: (path: readonly string[]) => ConfigSource;
  private socket: SocketModeConnection | null = null;
  /** Socket Mode: whether this replica receives (always, alone; under the account's receiver lease, among replicas). */
  private receiving = false;
  private readonly board = new ApprovalBoard();
  private readonly recent = new RecentKeys();
  private threads: AnsweredThreads | null = null;
  private readonly inflight = new Set<Promise<unknown>>();
  private started = false;
  private stopped = false;
  private readonly log: Logger;
  /** The gateway's secret scrubber, for tool status lines. */
  private readonly scrub: ((text: string) => string) | undefined;

  constructor(
    readonly account: string,
    private readonly cfg: Readonly<SlackAccountConfig>,
    deps: ChannelFactoryDeps,
  ) {
    this.id = `slack:${account}`;
    this.required = cfg.required;
    this.log = deps.log.child({ channel: this.id });
    this.scrub = deps.scrub;
    this.faults = slackFaultBoundary(this.log, account);
    this.source = (path) => deps.configSource?.(account, path) ?? { key: ['channels', 'slack', 'accounts', account, ...path].join('.'), variables: [] };
  }

  async start(ctx: ChannelContext): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.ctx = ctx;
    const timeoutMs = this.cfg.apiTimeout;
    const spec = { apiUrl: this.cfg.apiUrl, retries: this.cfg.maxRetries, timeoutMs, log: this.log, signal: this.abort.signal };
    this.api = createWebClient(this.cfg.botToken, spec);
    this.drafts = createWebClient(this.cfg.botToken, { ...spec, retries: 0, rejectRateLimitedCalls: true });
    this.names = new UserNames(createWebClient(this.cfg.botToken, { ...spec, retries: 0, timeoutMs: 1000 }));
    this.threads = new AnsweredThreads((channel) => ctx.ledger.finalsSince(channel, 0));
    if (this.cfg.mode === 'socket') this.receiving = ctx.inbox.receiving !== 'leased';
    // Slack is reached in the background: start never waits on the network, so the gateway listens at once.
    const authClient = createWebClient(this.cfg.botToken, { ...spec, retries: 0 });
    this.connecting = this.connect(authClient, timeoutMs).catch((err: unknown) => this.faults.record({ channel: this.id, task: 'connect' }, err));
    if (this.cfg.mode === 'http') {
      await ctx.http.register(
        slackHttpRoutes({
          account: this.account,
          signingSecret: this.cfg.signingSecret ?? '',
          log: this.log,
          onEvent: (body, retry) => this.onEvent(body, retry.num),
          onInteraction: (payload) => this.track(this.onInteraction(payload), 'interaction'),
          onCommand: (fields) => runSlashCommand(this.interactionDeps(), fields),
        }),
      );
      this.log.info({ paths: slackPaths(this.account) }, 'slack events endpoint mounted');
    }
  }

  /** Socket Mode runs on one replica per app: the gateway resumes and pauses it under the account's receiver lease. */
  exclusiveReceiver(): ExclusiveReceiver | null {
    if (this.cfg.mode !== 'socket') return null;
    return {
      resume: () => {
        this.receiving = true;
        if (this.self) this.openSocket();
      },
      pause: async () => {
        this.receiving = false;
        const socket = this.socket;
        this.socket = null;
        await socket?.stop();
      },
    };
  }

  /** A new Socket Mode connection (a stopped one never reconnects), once the bot is identified. */
  private openSocket(): void {
    if (this.socket || this.stopped || !this.receiving || this.abort.signal.aborted) return;
    const timeoutMs = this.cfg.apiTimeout;
    this.socket = new SocketModeConnection({
      appToken: this.cfg.appToken ?? '',
      apiUrl: this.cfg.apiUrl,
      clientPingTimeout: this.cfg.clientPingTimeout,
      livenessTimeout: this.cfg.livenessTimeout,
      reconnectBackoffMax: this.cfg.reconnectBackoffMax,
      apiTimeout: timeoutMs,
      refusedRetryInterval: this.cfg.refusedRetryInterval,
      refused: (code, retryInMs) => refusal(this.account, this.source(['appToken']), code, retryInMs),
      signal: this.abort.signal,
      log: this.log.child({ receiver: 'socket' }),
      onEnvelope: (env) => this.onEnvelope(env),
    });
    this.socket.start();
  }

  /**
   * `auth.test` (who the bot is, for mentions and ignoring itself), then the socket in Socket Mode.
   * Network errors and 5xx: one warn line per backoff step naming host and cause, capped at
   * `reconnectBackoffMax`. A refused token: the account is down naming the config key, and is
   * tried again after `refusedRetryInterval`.
   */
  private async connect(client: WebClient, timeoutMs: number): Promise<void> {
    const signal = this.abort.signal;
    const host = hostOf(this.cfg.apiUrl);
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const r = await client.auth.test();
        this.self = { teamId: r.team_id ?? '', botUserId: r.user_id ?? '', botId: r.bot_id ?? '' };
        this.identity = { ok: true, detail: `team ${this.self.teamId}, bot user ${this.self.botUserId}` };
        this.refused = null;
        this.markIdentified();
        this.log.info({ account: this.account, team: this.self.teamId, attempt }, 'slack account identified');
        break;
      } catch (err) {
        if (signal.aborted) return;
        const d = describeSlackError(err, timeoutMs);
        let delay: number;
        if (d.kind === 'permanent') {
          delay = this.cfg.refusedRetryInterval;
          this.refused = refusal(this.account, this.source(['botToken']), d.code, delay);
          this.log.error({ call: 'auth.test', ...this.refused.fields }, 'slack account down');
          attempt = 0;
        } else {
          delay = Math.min(this.cfg.reconnectBackoffMax, 1000 * 2 ** (attempt - 1));
          const cause = d.cause ?? d.code;
          this.identity = { ok: false, detail: `auth.test: ${cause} (${host}); retry ${attempt} in ${delay} ms` };
          if (d.kind === 'network' || d.kind === 'server') this.log.warn({ call: 'auth.test', host, cause, attempt, retryInMs: delay }, 'slack unreachable');
          else this.log.warn({ call: 'auth.test', code: d.code, attempt, retryInMs: delay }, 'slack auth.test failed');
        }
        await sleep(delay, undefined, { signal, ref: false }).catch(() => undefined);
      }
    }
    if (!signal.aborted) this.openSocket();
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    if (!this.started) return { state: 'down', detail: 'not started' };
    const faults = this.faults.summary();
    const withFaults = (h: ChannelHealth): ChannelHealth => (faults ? { ...h, detail: `${h.detail ?? h.state}; ${faults}` } : h);
    if (this.refused) return withFaults({ state: 'down', detail: this.refused.detail });
    if (!this.identity.ok) return withFaults({ state: 'starting', detail: this.identity.detail });
    if (this.socket) return withFaults(this.socket.status());
    if (this.cfg.mode === 'socket') {
      return withFaults({
        state: 'up',
        detail: `standby: another replica holds the Socket Mode connection (lease receiver:${this.id}); this one takes over if it stops`,
      });
    }
    return withFaults({ state: 'up', detail: `http: ${slackPaths(this.account).events}` });
  }

  /** Cancels pending retries, reconnects and in-flight calls, then waits briefly for the rest to settle. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    const settled = Promise.allSettled([this.socket?.stop(), this.connecting, ...this.inflight]);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([settled.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), STOP_WAIT_MS)))]);
    clearTimeout(timer);
    if (late) this.log.warn({ account: this.account, pending: this.inflight.size }, 'slack stop: work still pending after cancel; abandoned');
  }

  /** Runs `p` inside the fault boundary: a failure is recorded for `task` in `conversation`, never rethrown. */
  private track(p: Promise<unknown>, task = 'task', conversation?: string): void {
    const guarded = p.catch((err: unknown) => this.faults.record({ channel: this.id, task, ...(conversation !== undefined ? { conversation } : {}) }, err));
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
  }

  private interactionDeps(): InteractionDeps {
    return { ctx: this.ctx!, api: this.api!, board: this.board, account: this.account, log: this.log };
  }

  /** Maps and stores one event_callback; throws when the inbox refused it (the caller does not ack). */
  private async onEvent(body: Record<string, unknown>, retryNum: number | null | undefined): Promise<void> {
    if (!this.self) await this.waitIdentified();
    const parsed = parseMessageEvent(body.event);
    if ('drop' in parsed) {
      this.log.debug({ eventId: typeof body.event_id === 'string' ? body.event_id : undefined, reason: parsed.drop }, 'slack event dropped');
      return;
    }
    const ev = parsed.event;
    const mapped = mapMessageEvent(ev, typeof body.team_id === 'string' ? body.team_id : '', this.account, this.self);
    if ('drop' in mapped) {
      this.log.debug({ eventId: body.event_id, reason: mapped.drop }, 'slack event dropped');
      return;
    }
    const files = describeSlackFiles(body.event);
    const tooLarge = files.find((f) => (f.size ?? 0) > this.cfg.maxInboundMediaBytes);
    if (tooLarge) return this.refuseLargeFile(mapped.message);
    const msg = files.length === 0 ? mapped.message : { ...mapped.message, files: files.map((f) => slackInboundFile(f, this.fileSource())) };
    // A reply in a thread the bot takes part in is for the bot, mention or not.
    const thread = msg.conversation.thread;
    if (msg.kind === 'room' && !msg.mentioned && ev.thread_ts && thread && (await this.threads!.has(msg.conversation.id, thread))) msg.mentioned = true;
    // An unmentioned copy (ignored by the gate, so never in the inbox) must not fold a mentioned one.
    const ran = await this.recent.once(`${msg.dedupeKey}${msg.mentioned ? ':m' : ''}`, async () => {
      if (msg.kind === 'dm' && ev.user) {
        const name = await this.names!.get(ev.user);
        if (name) msg.sender.displayName = name;
      }
      const res = await this.ctx!.inbox.accept(msg);
      if (res.gate === 'admitted' && msg.kind === 'room' && thread) this.threads!.add(msg.conversation.id, thread);
      this.log.info(
        { eventId: body.event_id, dedupeKey: msg.dedupeKey, retryNum, gate: res.gate, duplicate: res.duplicate, turnId: res.turnId },
        'slack event accepted',
      );
    });
    if (!ran) this.log.debug({ eventId: body.event_id, dedupeKey: msg.dedupeKey, retryNum }, 'slack event folded into its first delivery');
  }

  /**
   * Waits for auth.test, at most `apiTimeout` and never past Slack's 3-second delivery limit;
   * throws (so the event is not acknowledged and Slack redelivers it) when the account is not identified.
   */
  private async waitIdentified(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((r) => (timer = setTimeout(r, Math.min(IDENTIFY_WAIT_MS, this.cfg.apiTimeout))));
    await Promise.race([this.identified, limit]);
    clearTimeout(timer);
    if (!this.self)
      throw new SwbError(
        SwbErrorCode.NotReady,
        `slack account ${this.account} is not identified yet (${this.health().detail ?? 'starting'}); event left for redelivery`,
      );
  }

  private async onInteraction(payload: Record<string, unknown>): Promise<void> {
    if (payload.type === 'block_actions') await handleBlockActions(this.interactionDeps(), payload);
  }

  /** Socket Mode: inbox first, then ack, then anything slower. An event we could not store is not acked (Slack redelivers). */
  private async onEnvelope(env: SocketEnvelope): Promise<void> {
    try {
      if (env.type === 'events_api') {
        if (env.body.type === 'event_callback') await this.onEvent(env.body, env.retryNum);
        await env.ack();
      } else if (env.type === 'interactive') {
        await env.ack();
        this.track(this.onInteraction(env.body), 'interaction');
      } else if (env.type === 'slash_commands') {
        const text = await runSlashCommand(this.interactionDeps(), env.body);
        await env.ack({ response_type: 'ephemeral', text });
      } else {
        await env.ack();
      }
    } catch (err) {
      this.faults.record({ channel: this.id, task: `envelope ${env.type}` }, err);
      this.log.error({ envelopeId: env.envelopeId, type: env.type }, 'slack envelope not stored; left unacknowledged for redelivery');
    }
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, _meta: RenderMeta): Promise<void> {
    if (to.kind === 'room' && to.thread) this.threads?.add(to.id, to.thread);
    const done = (async () => {
      const ledger = await this.ctx!.ledger.begin(turnId, to, {
        onReadError: (err) => this.faults.record({ channel: this.id, task: 'delivery ledger', conversation: to.id }, err),
      });
      const r = new TurnRender(
        {
          api: this.api!,
          drafts: this.drafts!,
          editIntervalMs: this.cfg.editInterval,
          board: this.board,
          log: this.log,
          fault: (task, err) => this.faults.record({ channel: this.id, task, conversation: to.id }, err),
          ...(this.scrub ? { scrub: this.scrub } : {}),
        },
        to,
        turnId,
        ledger,
      );
      for await (const ev of turn) await r.on(ev);
      await r.close();
    })();
    this.track(done, `render ${turnId}`, to.id);
    await done.catch(() => undefined);
  }

  /** Sends a workspace file with Slack's external upload flow (the `send_file` tool). */
  async sendFile(to: ConversationRef, file: OutboundFile): Promise<string> {
    if (!this.api) throw new Error('the Slack account is not started');
    try {
      await uploadSlackFile(this.api, to, file);
    } catch (err) {
      throw new Error(`Slack did not take the file: ${err instanceof Error ? err.message : String(err)}`);
    }
    return `shared in the Slack conversation as ${file.name}`;
  }

  private fileSource(): SlackFileSource {
    return {
      token: this.cfg.botToken,
      apiUrl: this.cfg.apiUrl,
      maxBytes: this.cfg.maxInboundMediaBytes,
      signal: this.abort.signal,
      timeoutMs: Math.max(60_000, 4 * this.cfg.apiTimeout),
    };
  }

  /** A shared file over `maxInboundMediaBytes`: the message is not processed and the sender is told (in a DM, or when they mentioned the bot). */
  private refuseLargeFile(msg: InboundMessage): void {
    this.log.info({ event: 'slack_media_refused', conversation: msg.conversation.id }, 'slack: shared file over the size limit refused');
    if (msg.kind !== 'dm' && !msg.mentioned) return;
    const mb = Math.floor(this.cfg.maxInboundMediaBytes / (1024 * 1024));
    const key = `channels.slack.accounts.${this.account}.maxInboundMediaBytes`;
    this.track(
      this.notify(
        msg.conversation,
        `Sorry, that file is too large for me (the limit is ${mb} MB, set by ${key}). Please share a smaller one or describe it in text.`,
      ),
      'media refusal',
      msg.conversation.id,
    );
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    if (!this.api) return;
    const send = (async () => {
      for (const part of chunkMrkdwn(escapeMrkdwn(text))) {
        await this.api!.chat.postMessage({
          channel: to.id,
          text: part,
          ...(to.thread ? { thread_ts: to.thread } : {}),
          unfurl_links: false,
          unfurl_media: false,
        });
      }
    })();
    this.track(send, 'notice', to.id);
    await send.catch(() => undefined);
  }
}
