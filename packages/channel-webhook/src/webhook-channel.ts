import { randomUUID } from 'node:crypto';
import type { Channel, ChannelContext, ChannelFactoryDeps, ChannelHealth, ConversationRef, RenderMeta, TurnEvent } from '@switchboard/core';
import { CallbackClient, type DeliveryOutcome } from './callback-client.js';
import { ToolCallbacks } from './tool-callbacks.js';
import { webhookRoutes } from './webhook-routes.js';
import type { CallbackConversation, WebhookCallback } from './wire.js';

/** One webhook account's settings (the validated config, durations in milliseconds). */
export interface WebhookChannelOptions {
  account: string;
  secret: string;
  callbackUrl: string;
  replayWindowMs: number;
  callbackRetries: number;
  callbackRetryDelayMs: number;
  callbackTimeoutMs: number;
  maxBodyBytes: number;
  required: boolean;
  log: ChannelFactoryDeps['log'];
  /** Scrubs known secret values out of tool callback summaries (the gateway's scrubber). */
  scrub?: (text: string) => string;
}

/** Distributes `Omit` over a union, so each callback type keeps its own fields. */
type WithoutBase<T> = T extends unknown ? Omit<T, 'id' | 'account' | 'conversation'> : never;

/**
 * The generic webhook channel: a platform POSTs signed messages to `/channels/webhook/<account>`
 * and receives signed callbacks (replies, notices, approval requests) at `callbackUrl`.
 * Callbacks of one conversation are sent in order; a final reply is ledgered once the platform
 * answered 2xx, so a resumed turn never sends it again.
 */
export class WebhookChannel implements Channel {
  readonly type = 'webhook';
  readonly id: string;
  readonly account: string;
  readonly required: boolean;
  readonly capabilities = { threads: true, edits: false, buttons: false, maxText: 100_000 };
  private ctx: ChannelContext | null = null;
  private readonly client: CallbackClient;
  /** The tail of each conversation's callback chain (ordering). */
  private readonly chains = new Map<string, Promise<unknown>>();
  private stopped = false;
  private stopping: Promise<void> | null = null;

  constructor(private readonly options: WebhookChannelOptions) {
    this.account = options.account;
    this.id = `webhook:${options.account}`;
    this.required = options.required;
    this.client = new CallbackClient({
      url: options.callbackUrl,
      secret: options.secret,
      retries: options.callbackRetries,
      retryDelayMs: options.callbackRetryDelayMs,
      timeoutMs: options.callbackTimeoutMs,
      log: options.log.child({ channel: this.id }),
    });
  }

  async start(ctx: ChannelContext): Promise<void> {
    this.ctx = ctx;
    await ctx.http.register(
      webhookRoutes({
        account: this.account,
        secret: this.options.secret,
        replayWindowMs: this.options.replayWindowMs,
        maxBodyBytes: this.options.maxBodyBytes,
        ctx,
      }),
    );
  }

  private get log(): ChannelFactoryDeps['log'] {
    return this.ctx?.log ?? this.options.log;
  }

  /**
   * Queues a callback behind the conversation's earlier ones; resolves with its outcome. Never
   * rejects. A function `body` is read when the callback's turn comes (coalesced progress);
   * `retries` overrides the account's (0: best-effort, one attempt).
   */
  private send(
    to: ConversationRef,
    id: string,
    body: WithoutBase<WebhookCallback> | (() => WithoutBase<WebhookCallback>),
    opts: { retries?: number } = {},
  ): Promise<DeliveryOutcome> {
    if (this.stopped) return Promise.resolve({ ok: false, attempts: 0, error: 'channel stopped' });
    const conversation: CallbackConversation = { id: to.id, kind: to.kind, ...(to.thread ? { thread: to.thread } : {}) };
    const payload = () => ({ ...(typeof body === 'function' ? body() : body), id, account: this.account, conversation }) as WebhookCallback;
    const key = `${to.id}\u0000${to.thread ?? ''}`;
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev
      .then(() => this.client.deliver(payload(), opts))
      .catch((err: unknown): DeliveryOutcome => {
        this.log.error({ err, deliveryId: id }, 'callback could not be sent');
        return { ok: false, attempts: 0, error: 'internal error' };
      });
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    // Tool callbacks are queued, not awaited: the turn's events keep flowing while they are sent.
    const tools = new ToolCallbacks(turnId, meta.clientId, (id, body) => void this.send(to, id, body, { retries: 0 }), this.options.scrub);
    try {
      for await (const ev of turn) {
        switch (ev.type) {
          case 'tool_start':
          case 'tool_progress':
          case 'tool_end':
            tools.on(ev);
            break;
          case 'approval_requested':
            await this.send(to, `${turnId}:approval:${ev.approvalId}`, {
              type: 'approval_request',
              turnId,
              replyTo: meta.clientId,
              approvalId: ev.approvalId,
              tool: ev.name,
              summary: ev.summary,
              expiresAt: ev.expiresAt,
              ...(ev.source ? { source: ev.source } : {}),
              ...(ev.choices ? { choices: ev.choices } : {}),
            });
            break;
          case 'approval_resolved':
            await this.send(to, `${turnId}:resolved:${ev.approvalId}`, {
              type: 'approval_resolved',
              turnId,
              approvalId: ev.approvalId,
              allowed: ev.allowed,
              by: ev.by,
            });
            break;
          case 'turn_end':
            // A steered message is answered by the turn that took it in: nothing to send for it.
            if (ev.reason !== 'steered') await this.final(to, turnId, ev, meta);
            break;
          default:
            break;
        }
      }
    } catch (err) {
      this.log.error({ err, turnId }, 'webhook render failed');
    }
  }

  private async final(to: ConversationRef, turnId: string, ev: Extract<TurnEvent, { type: 'turn_end' }>, meta: RenderMeta): Promise<void> {
    // Resume: a final the platform already acknowledged is never sent again.
    const ledger = await this.ctx!.ledger.begin(turnId, to);
    if (ledger.finals.has(0)) {
      this.log.info({ turnId }, 'final already delivered; not sending it again');
      return;
    }
    const out = await this.send(to, `${turnId}:0`, {
      type: 'reply',
      turnId,
      replyTo: meta.clientId,
      text: ev.text,
      final: true,
      part: 0,
      state: ev.state,
      reason: ev.reason,
      ...(ev.error ? { error: ev.error } : {}),
    });
    if (!out.ok) {
      this.log.warn({ turnId }, 'final reply not delivered; it stays in the transcript and is sent again if the turn resumes');
      return;
    }
    await ledger.recordFinal(
      0,
      out.messageId,
      { text: ev.text, state: ev.state, reason: ev.reason, clientId: meta.clientId, ...(ev.error ? { error: ev.error } : {}) },
      { last: true },
    );
  }

  /** Queues the notice and returns at once: an inbound request never waits on the platform's callback endpoint. */
  async notify(to: ConversationRef, text: string): Promise<void> {
    void this.send(to, `notice:${randomUUID()}`, { type: 'notice', text });
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    return this.client.health();
  }

  async stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.client.stop();
      await Promise.allSettled([...this.chains.values()]);
    })();
    return this.stopping;
  }
}
