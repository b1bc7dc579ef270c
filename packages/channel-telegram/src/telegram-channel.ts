import { compileSafeRegex, type SafeRegex } from '@switchboard/agent';
import type { Channel, ChannelContext, ChannelFactoryDeps, ChannelHealth, ConversationRef, RenderMeta, TurnEvent } from '@switchboard/core';
import type { Logger } from 'pino';
import { createApis, type TelegramApis } from './api.js';
import { ApprovalMessages } from './approvals.js';
import { COMMANDS, isOwnCommand, runCommand } from './commands.js';
import { describeError } from './errors.js';
import { conversationOf, isMentioned, mediaBytes, parseCommand, toInbound, type BotIdentity } from './inbound.js';
import { OffsetStore } from './offset-store.js';
import { ALLOWED_UPDATES, MAX_MESSAGE_CHARS, webhookPath, type TelegramAccountConfig } from './options.js';
import { Poller } from './poller.js';
import { TurnRenderer } from './renderer.js';
import { Sender } from './sender.js';
import { updateSchema, type TgMessage, type TgUpdate, type TgUser } from './update-schema.js';
import { webhookRoute } from './webhook.js';

/** Accept errors that will not go away by retrying: the update is dropped (logged), not retried forever. */
const PERMANENT = new Set(['SWB_E_UNKNOWN_SENDER']);

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
  private readonly poller: Poller | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private webhookProblem: string | null = null;
  private stopped = false;

  constructor(
    readonly account: string,
    private readonly cfg: TelegramAccountConfig,
    deps: ChannelFactoryDeps,
  ) {
    this.id = `telegram:${account}`;
    this.required = cfg.required;
    this.log = deps.log.child({ channel: this.id });
    this.apis = createApis(cfg);
    this.sender = new Sender(this.apis.api, cfg.token, this.log);
    this.approvals = new ApprovalMessages(() => this.context(), this.sender, this.log, cfg.token);
    this.patterns = cfg.mentionPatterns.map((p) => compileSafeRegex(p, { caseInsensitive: true }));
    if (cfg.mode === 'polling') {
      this.poller = new Poller({
        api: this.apis.pollApi,
        token: cfg.token,
        log: this.log,
        store: new OffsetStore(deps.dataDir, account),
        pollTimeoutMs: cfg.pollTimeout,
        pollStallTimeoutMs: Math.max(cfg.pollStallTimeout, cfg.pollTimeout + 1000),
        handle: (u) => this.handleUpdate(u),
      });
    }
  }

  async start(ctx: ChannelContext): Promise<void> {
    this.ctx = ctx;
    this.log = ctx.log;
    if (this.poller) {
      this.poller.start(async () => {
        await this.init();
        await this.apis.api.deleteWebhook({ drop_pending_updates: false });
      });
      return;
    }
    await ctx.http.register(
      webhookRoute({ path: webhookPath(this.account), secret: this.cfg.webhookSecret ?? '', log: this.log, ready: () => this.bot !== null, handle: (u) => this.handleUpdate(u) }),
    );
    this.track(this.initWebhook());
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    if (this.poller) return this.poller.health();
    if (this.webhookProblem) return { state: 'degraded', detail: `webhook: ${this.webhookProblem}` };
    if (!this.bot) return { state: 'down', detail: 'webhook: starting (getMe has not answered yet)' };
    return { state: 'up', detail: this.cfg.webhookUrl ? 'webhook registered' : 'webhook route ready (registered outside the gateway)' };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.poller?.stop();
    await Promise.allSettled([...this.inflight]);
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const ctx = this.context();
    const prior = await ctx.deliveriesOf(turnId).catch((err: unknown) => {
      this.log.error({ error: describeError(err, this.cfg.token), turnId }, 'telegram: could not read the delivery ledger');
      return [];
    });
    const deps = { ctx, sender: this.sender, approvals: this.approvals, log: this.log, account: this.account, token: this.cfg.token, typingIntervalMs: this.cfg.typingInterval, editIntervalMs: this.cfg.editInterval };
    await new TurnRenderer(deps, to, turnId, prior, meta).run(turn);
  }

  async notify(to: ConversationRef, text: string): Promise<void> {
    try {
      await this.sender.sendPlain({ chatId: Number(to.id), ...(to.thread ? { thread: Number(to.thread) } : {}) }, text);
    } catch (err) {
      this.log.warn({ error: describeError(err, this.cfg.token), chat: to.id }, 'telegram: notice not delivered');
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
    this.track(
      this.apis.api.setMyCommands(COMMANDS.map((c) => ({ ...c }))).then(
        () => undefined,
        (err: unknown) => this.log.warn({ error: describeError(err, this.cfg.token) }, 'telegram: could not register commands'),
      ),
    );
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
        this.webhookProblem = describeError(err, this.cfg.token);
        this.log.error({ error: this.webhookProblem }, 'telegram: webhook set-up failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** failures)).unref());
      }
    }
  }

  private track(p: Promise<void>): void {
    const t = p.catch((err: unknown) => this.log.error({ error: describeError(err, this.cfg.token) }, 'telegram: background task failed'));
    this.inflight.add(t);
    void t.finally(() => this.inflight.delete(t));
  }

  /** Handles one update. Resolves once it is stored or deliberately dropped; rejects to be retried. */
  private async handleUpdate(raw: unknown): Promise<void> {
    const parsed = updateSchema.safeParse(raw);
    if (!parsed.success) {
      this.log.warn({ event: 'telegram_bad_update' }, 'telegram: dropped an update that is not valid');
      return;
    }
    const u: TgUpdate = parsed.data;
    if (u.callback_query) return this.track(this.approvals.press(u.callback_query));
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
    if (cmd && (!cmd.target || cmd.target.toLowerCase() === bot.username.toLowerCase()) && isOwnCommand(cmd.name)) {
      const reply = await runCommand(this.context(), cmd.name, cmd.args, conv, `telegram:${from.id}`);
      this.track(this.notifyReply(conv, m.message_id, reply));
      return;
    }
    if (cmd?.target && cmd.target.toLowerCase() !== bot.username.toLowerCase()) return;
    if (mediaBytes(m) > this.cfg.maxInboundMediaBytes) {
      this.log.info({ event: 'telegram_media_refused', chat: conv.id, bytes: mediaBytes(m) }, 'telegram: inbound media over the size limit refused');
      if (conv.kind === 'dm' || isMentioned(m, bot, this.patterns)) {
        const mb = Math.floor(this.cfg.maxInboundMediaBytes / (1024 * 1024));
        this.track(this.notifyReply(conv, m.message_id, `Sorry, that file is too large for me (the limit is ${mb} MB). Please send a smaller one or describe it in text.`));
      }
      return;
    }
    const message = toInbound(updateId, { ...m, from }, this.account, bot, this.patterns);
    try {
      const r = await this.context().accept(message);
      if (r.gate && r.gate !== 'admitted') this.log.info({ event: 'telegram_not_admitted', gate: r.gate, chat: conv.id, kind: conv.kind, updateId }, 'telegram: message not admitted');
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && PERMANENT.has(code)) {
        this.log.warn({ event: 'telegram_dropped', code, updateId }, 'telegram: message dropped');
        return;
      }
      throw err;
    }
  }

  private async notifyReply(conv: ConversationRef, replyTo: number, text: string): Promise<void> {
    try {
      await this.sender.sendPlain({ chatId: Number(conv.id), ...(conv.thread ? { thread: Number(conv.thread) } : {}), replyTo }, text);
    } catch (err) {
      this.log.warn({ error: describeError(err, this.cfg.token), chat: conv.id }, 'telegram: reply not delivered');
    }
  }
}

/** The channel factory the gateway calls: one TelegramChannel per configured bot account. */
export function createChannels(accounts: Readonly<Record<string, TelegramAccountConfig>>, deps: ChannelFactoryDeps): Channel[] {
  return Object.entries(accounts).map(([account, cfg]) => new TelegramChannel(account, cfg, deps));
}
