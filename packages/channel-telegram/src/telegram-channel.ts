import { compileSafeRegex, type OutboundFile, type SafeRegex } from '@switchboard/agent';
import {
  AttemptCounter,
  countsAsAttempt,
  DEAD_LETTER_APOLOGY,
  FaultBoundary,
  isSwbError,
  SwbErrorCode,
  type Channel,
  type ChannelContext,
  type ChannelFactoryDeps,
  type ChannelHealth,
  type ConversationRef,
  type ExclusiveReceiver,
  type RenderMeta,
  type TurnEvent,
} from '@switchboard/core';
import type { Logger } from 'pino';
import { createApis, type TelegramApis } from './api.js';
import { ApprovalMessages } from './approvals.js';
import { runCommand } from './commands.js';
import { updateFacts } from './dead-letter.js';
import { describeError, isPermanentAuthError } from './errors.js';
import { sendDocument, withTelegramFiles } from './files.js';
import { conversationOf, isMentioned, mediaBytes, parseCommand, toInbound, type BotIdentity } from './inbound.js';
import { legacyOffsetFile, OffsetStore } from './offset-store.js';
import type { TelegramAccountConfig } from './account.js';
import { ALLOWED_UPDATES, MAX_MESSAGE_CHARS, webhookPath } from './options.js';
import { Poller } from './poller.js';
import { TurnRenderer } from './renderer.js';
import { Sender } from './sender.js';
import { updateSchema, type TgMessage, type TgUpdate, type TgUser } from './update-schema.js';
import { webhookRoute } from './webhook.js';

/** Accept errors that will not go away by retrying: the update is dropped (logged), not retried forever. */
const PERMANENT: ReadonlySet<SwbErrorCode> = new Set([SwbErrorCode.UnknownSender]);

/** A task failure older than this no longer marks the account degraded. */
const FAULT_WINDOW_MS = 10 * 60_000;

/**
 * One Telegram bot account: long polling (with a stall watchdog) or a webhook in, rendered turns
 * out. Every inbound message goes through `ctx.accept` (inbox + boundary gate) before the update
 * is acknowledged; callback queries (approval buttons) and the adapter's own commands do not.
 */
export class TelegramChannel implements Channel {
  readonly type = 'telegram';
  readonly id: string;
  readonly required: boolean;
  readonly capabilities = { threads: true, edits: true, buttons: true, maxText: MAX_MESSAGE_CHARS };
  private ctx: ChannelContext | null = null;
  private log: Logger;
  private bot: BotIdentity | null = null;
  private readonly apis: TelegramApis;
  private readonly sender: Sender;
  private readonly approvals: ApprovalMessages;
  private readonly patterns: SafeRegex[];
  /** The long-poll loop while this replica receives (polling mode); null in standby or webhook mode. */
  private poller: Poller | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private webhookProblem: string | null = null;
  private stopped = false;
  /** Aborted by stop(): pending retries, waits and calls end at once. */
  private readonly stopping = new AbortController();
  /** Failures of this account's tasks (typing, renders, buttons, commands): logged, counted, in health(). */
  private readonly faults: FaultBoundary;
  /** Where the token comes from, for messages: the config key and the variable behind it (never the value). */
  private readonly tokenSource: string;
  /** The gateway's secret scrubber, for tool status lines. */
  private readonly scrub: ((text: string) => string) | undefined;
  /** Where releases before issue 19 kept the offset file (imported once, see OffsetStore). */
  private readonly dataDir: string;

  constructor(
    readonly account: string,
    private readonly cfg: TelegramAccountConfig,
    deps: ChannelFactoryDeps,
  ) {
    this.id = `telegram:${account}`;
    this.dataDir = deps.dataDir;
    this.required = cfg.required;
    this.log = deps.log.child({ channel: this.id });
    this.scrub = deps.scrub;
    this.faults = new FaultBoundary(this.log, (err) => describeError(err, cfg.token));
    const source = deps.configSource?.(account, ['token']) ?? { key: `channels.telegram.accounts.${account}.token`, variables: [] };
    this.tokenSource = source.variables.length > 0 ? `${source.key} (set from the environment variable ${source.variables.join(', ')})` : source.key;
    this.apis = createApis(cfg, this.log, this.stopping.signal);
    this.sender = new Sender(this.apis.api, cfg.token, this.log, this.faults, this.id);
    this.approvals = new ApprovalMessages(() => this.context(), this.sender, this.log, cfg.token);
    this.patterns = cfg.mentionPatterns.map((p) => compileSafeRegex(p, { caseInsensitive: true }));
  }

  /** A fresh poll loop: one per time this replica starts receiving (a stopped loop never restarts). */
  private newPoller(): Poller {
    const cfg = this.cfg;
    return new Poller({
      api: this.apis.pollApi,
      token: cfg.token,
      log: this.log,
      pollTimeoutMs: cfg.pollTimeout,
      pollStallTimeoutMs: Math.max(cfg.pollStallTimeout, cfg.pollTimeout + 1000),
      host: this.apis.host,
      backoff: { baseMs: cfg.retryBaseDelay, maxMs: cfg.retryMaxDelay },
      authRetryMs: cfg.authRetryInterval,
      authProblem: (what) => this.authProblem(what),
      handle: (u) => this.handleUpdate(u),
      maxAttempts: () => this.ctx?.inbox.maxAttempts ?? 5,
      deadLetter: (u, error, attempts) => this.deadLetter(u, error, attempts),
    });
  }

  async start(ctx: ChannelContext): Promise<void> {
    this.ctx = ctx;
    this.log = ctx.log;
    if (this.cfg.mode === 'polling') {
      // Replicas on one database: only the holder of this account's receiver lease polls (Telegram allows one poller per bot).
      if (ctx.inbox.receiving !== 'leased') this.resumePolling();
      return;
    }
    // Telegram redelivers an update answered with 503: count the attempts, dead-letter at the limit.
    const attempts = new AttemptCounter(ctx.inbox.maxAttempts);
    await ctx.http.register(
      webhookRoute({
        path: webhookPath(this.account),
        secret: this.cfg.webhookSecret ?? '',
        log: this.log,
        ready: () => this.bot !== null,
        handle: (u) => this.handleWebhookUpdate(u, attempts),
      }),
    );
    this.track('webhook set-up', () => this.initWebhook());
  }

  /** Long polling runs on one replica per bot: the gateway resumes and pauses it under the account's receiver lease. */
  exclusiveReceiver(): ExclusiveReceiver | null {
    if (this.cfg.mode !== 'polling') return null;
    return { resume: () => this.resumePolling(), pause: () => this.pausePolling() };
  }

  private resumePolling(): void {
    if (this.stopped || this.poller || !this.ctx) return;
    const poller = this.newPoller();
    this.poller = poller;
    // The offset is read from the cursor row at every start: a replica taking over continues where the last holder stopped.
    poller.start(new OffsetStore(this.ctx.inbox.cursors, legacyOffsetFile(this.dataDir, this.account), this.log), async () => {
      await this.init();
      await this.apis.api.deleteWebhook({ drop_pending_updates: false });
    });
  }

  private async pausePolling(): Promise<void> {
    const poller = this.poller;
    this.poller = null;
    await poller?.stop();
  }

  health(): ChannelHealth {
    const base = this.linkHealth();
    const last = this.faults.lastFailure;
    if (!last || this.stopped || Date.now() - last.at.getTime() > FAULT_WINDOW_MS) return base;
    const detail = base.detail ? `${base.detail}; ${this.faults.summary()}` : this.faults.summary();
    return { state: base.state === 'up' ? 'degraded' : base.state, detail };
  }

  private linkHealth(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    if (this.poller) return this.poller.health();
    if (this.cfg.mode === 'polling') {
      if (!this.ctx) return { state: 'down', detail: 'polling starting' };
      return { state: 'up', detail: `standby: another replica polls this bot (it holds the lease receiver:${this.id}); this one takes over if it stops` };
    }
    if (this.webhookProblem) return { state: this.bot ? 'degraded' : 'down', detail: `webhook: ${this.webhookProblem}` };
    if (!this.bot) return { state: 'down', detail: 'webhook: starting (getMe has not answered yet)' };
    return { state: 'up', detail: this.cfg.webhookUrl ? 'webhook registered' : 'webhook route ready (registered outside the gateway)' };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort(new Error('the channel is stopping'));
    await this.poller?.stop();
    await Promise.allSettled([...this.inflight]);
  }

  /** The `down` detail for a token the Bot API refused: names the account, the key and the variable. */
  private authProblem(what: string): string {
    const every = `${Math.round(this.cfg.authRetryInterval / 1000)}s`;
    return `telegram account "${this.account}": the Bot API refused the bot token (${what}); check ${this.tokenSource}; trying again every ${every}`;
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const ledger = await this.context().ledger.begin(turnId, to, {
      onReadError: (err) => this.log.error({ error: describeError(err, this.cfg.token), turnId }, 'telegram: could not read the delivery ledger'),
    });
    const deps = {
      sender: this.sender,
      approvals: this.approvals,
      log: this.log,
      token: this.cfg.token,
      typingIntervalMs: this.cfg.typingInterval,
      editIntervalMs: this.cfg.editInterval,
      faults: this.faults,
      channelId: this.id,
      ...(this.scrub ? { scrub: this.scrub } : {}),
    };
    await this.faults.run({ channel: this.id, task: `render turn ${turnId}`, conversation: to.id }, () =>
      new TurnRenderer(deps, to, turnId, ledger, meta).run(turn),
    );
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    try {
      await this.sender.sendPlain({ chatId: Number(to.id), ...(to.thread ? { thread: Number(to.thread) } : {}) }, text);
    } catch (err) {
      this.faults.record({ channel: this.id, task: 'notice', conversation: to.id }, err);
    }
  }

  private context(): ChannelContext {
    if (!this.ctx) throw new Error('telegram channel used before start()');
    return this.ctx;
  }

  /** getMe (the bot's id and username, for mentions) and command registration (failures logged only). */
  private async init(): Promise<void> {
    const me = await this.apis.api.getMe();
    this.bot = { id: me.id, username: me.username };
    this.log.info({ event: 'telegram_bot', bot: me.username, mode: this.cfg.mode }, 'telegram: bot identified');
    this.track('register commands', () => this.apis.api.setMyCommands(this.context().commands.list.map((c) => ({ ...c }))));
  }

  private async initWebhook(): Promise<void> {
    for (let failures = 0; !this.stopped; failures++) {
      try {
        if (!this.bot) await this.init();
        if (this.cfg.webhookUrl) {
          await this.apis.api.setWebhook(this.cfg.webhookUrl, { secret_token: this.cfg.webhookSecret ?? '', allowed_updates: [...ALLOWED_UPDATES] });
        }
        this.webhookProblem = null;
        return;
      } catch (err) {
        const what = describeError(err, this.cfg.token);
        const permanent = isPermanentAuthError(err);
        this.webhookProblem = permanent ? this.authProblem(what) : what;
        const delay = permanent ? this.cfg.authRetryInterval : Math.min(this.cfg.retryMaxDelay, this.cfg.retryBaseDelay * 2 ** failures);
        this.log.error(
          { event: 'telegram_webhook_setup_failed', error: what, host: this.apis.host, retryInMs: delay },
          `telegram: webhook set-up failed; retrying in ${delay} ms`,
        );
        await new Promise<void>((r) => {
          const t = setTimeout(r, delay);
          this.stopping.signal.addEventListener(
            'abort',
            () => {
              clearTimeout(t);
              r();
            },
            { once: true },
          );
        });
      }
    }
  }

  /** Runs a background task inside the account's fault boundary; stop() waits for it. */
  private track(task: string, fn: () => Promise<unknown>, conversation?: string): void {
    const t = this.faults.spawn({ channel: this.id, task, ...(conversation !== undefined ? { conversation } : {}) }, fn);
    this.inflight.add(t);
    void t.finally(() => this.inflight.delete(t));
  }

  /**
   * Gives up on an update: a dead letter (inbox row with the error) and a short apology to its
   * sender in the chat it came from, when known. Never throws: the poller moves on regardless.
   */
  private async deadLetter(raw: unknown, error: string, attempts: number): Promise<void> {
    const f = updateFacts(raw);
    await this.faults.run({ channel: this.id, task: 'record a dead letter', ...(f.chatId !== undefined ? { conversation: String(f.chatId) } : {}) }, () =>
      this.context().inbox.deadLetter({
        channel: 'telegram',
        account: this.account,
        dedupeKey: f.dedupeKey,
        ...(f.chatId !== undefined ? { conversation: String(f.chatId) } : {}),
        ...(f.senderId !== undefined ? { sender: `telegram:${f.senderId}` } : {}),
        summary: f.summary,
        error,
        attempts,
        receivedAt: new Date(),
      }),
    );
    if (f.chatId === undefined || f.senderId === undefined) return;
    const conv: ConversationRef = { channel: 'telegram', account: this.account, id: String(f.chatId), kind: f.chatKind ?? 'room' };
    this.track('dead-letter apology', () => this.notifyReply(conv, f.messageId ?? 0, DEAD_LETTER_APOLOGY), conv.id);
  }

  /** A webhook delivery: rejects (503, redelivered) until the update's attempts run out, then dead-letters it. */
  private async handleWebhookUpdate(u: TgUpdate, attempts: AttemptCounter): Promise<void> {
    const key = String(u.update_id);
    try {
      await this.handleUpdate(u);
      attempts.clear(key);
    } catch (err) {
      if (!countsAsAttempt(err)) throw err;
      const n = attempts.fail(key);
      if (!n.exhausted) throw err;
      attempts.clear(key);
      await this.deadLetter(u, describeError(err, this.cfg.token), n.attempts);
    }
  }

  /** Handles one update. Resolves once it is stored or deliberately dropped; rejects to be retried. */
  private async handleUpdate(raw: unknown): Promise<void> {
    const parsed = updateSchema.safeParse(raw);
    if (!parsed.success) {
      this.log.warn({ event: 'telegram_bad_update' }, 'telegram: dropped an update that is not valid');
      return;
    }
    const u: TgUpdate = parsed.data;
    if (u.callback_query) {
      const q = u.callback_query;
      return this.track('approval button', () => this.approvals.press(q), q.message ? String(q.message.chat.id) : undefined);
    }
    if (u.message) return this.handleMessage(u.update_id, u.message);
  }

  private async handleMessage(updateId: number, m: TgMessage): Promise<void> {
    const bot = this.bot;
    if (!bot) throw new Error('bot identity not known yet');
    if (!m.from || m.from.is_bot) {
      this.log.debug({ updateId }, 'telegram: ignored a message from a bot or without a sender');
      return;
    }
    const from: TgUser = m.from;
    const conv = conversationOf(this.account, m);
    const cmd = parseCommand(m);
    if (cmd && (!cmd.target || cmd.target.toLowerCase() === bot.username.toLowerCase()) && this.context().commands.has(cmd.name)) {
      const reply =
        (await this.faults.run({ channel: this.id, task: `command /${cmd.name}`, conversation: conv.id }, () =>
          runCommand(this.context().commands, cmd.name, cmd.args, conv, `telegram:${from.id}`),
        )) ?? `Sorry, /${cmd.name} failed. Please try again in a moment.`;
      this.track('command reply', () => this.notifyReply(conv, m.message_id, reply), conv.id);
      return;
    }
    if (cmd?.target && cmd.target.toLowerCase() !== bot.username.toLowerCase()) return;
    if (mediaBytes(m) > this.cfg.maxInboundMediaBytes) {
      this.log.info({ event: 'telegram_media_refused', chat: conv.id, bytes: mediaBytes(m) }, 'telegram: inbound media over the size limit refused');
      if (conv.kind === 'dm' || isMentioned(m, bot, this.patterns)) {
        const mb = Math.floor(this.cfg.maxInboundMediaBytes / (1024 * 1024));
        this.track(
          'media refusal',
          () =>
            this.notifyReply(
              conv,
              m.message_id,
              `Sorry, that file is too large for me (the limit is ${mb} MB, set by channels.telegram.accounts.${this.account}.maxInboundMediaBytes). Please send a smaller one or describe it in text.`,
            ),
          conv.id,
        );
      }
      return;
    }
    const message = withTelegramFiles(toInbound(updateId, { ...m, from }, this.account, bot, this.patterns), m, {
      api: this.apis.api,
      apiRoot: this.cfg.apiRoot,
      token: this.cfg.token,
      maxBytes: this.cfg.maxInboundMediaBytes,
      signal: this.stopping.signal,
      timeoutMs: Math.max(60_000, 4 * this.cfg.apiTimeout),
    });
    try {
      const r = await this.context().inbox.accept(message);
      if (r.gate && r.gate !== 'admitted')
        this.log.info({ event: 'telegram_not_admitted', gate: r.gate, chat: conv.id, kind: conv.kind, updateId }, 'telegram: message not admitted');
    } catch (err) {
      if (isSwbError(err) && PERMANENT.has(err.code)) {
        this.log.warn({ event: 'telegram_dropped', code: err.code, updateId }, 'telegram: message dropped');
        return;
      }
      throw err;
    }
  }

  /** Sends a workspace file as a document (the `send_file` tool). */
  async sendFile(to: ConversationRef, file: OutboundFile): Promise<string> {
    try {
      await sendDocument(this.apis.api, { chatId: Number(to.id), ...(to.thread ? { thread: Number(to.thread) } : {}) }, file);
    } catch (err) {
      throw new Error(`Telegram did not take the file: ${describeError(err, this.cfg.token)}`);
    }
    return `delivered to the Telegram chat as the document ${file.name}`;
  }

  private async notifyReply(conv: ConversationRef, replyTo: number, text: string): Promise<void> {
    try {
      await this.sender.sendPlain(
        { chatId: Number(conv.id), ...(conv.thread ? { thread: Number(conv.thread) } : {}), ...(replyTo > 0 ? { replyTo } : {}) },
        text,
      );
    } catch (err) {
      this.faults.record({ channel: this.id, task: 'reply', conversation: conv.id }, err);
    }
  }
}
