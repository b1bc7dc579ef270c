import type { AccessChange, Channel, ChannelContext, ChannelHealth, ConversationRef, RenderMeta, TurnEvent } from '@switchboard/core';
import { RequestKeys } from './headers.js';
import { OpenaiRelay } from './live-fanout.js';
import { LiveTurns, type OpenaiDeliveryContent } from './live-turns.js';
import { type OpenRequest, openaiRoutes } from './routes.js';

/** One OpenAI-compatible account's settings (the validated config, durations in milliseconds). */
export interface OpenaiChannelOptions {
  account: string;
  approvalWaitMs: number;
  pingIntervalMs: number;
  dedupeWindowMs: number;
  maxBodyBytes: number;
  required: boolean;
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * The OpenAI-compatible channel: `POST /v1/chat/completions` and `GET /v1/models` for clients
 * that speak the OpenAI API, authenticated with client tokens (docs/openai.md). A request is an
 * inbound message (its dedupe key from `Idempotency-Key`, or its content within a window); the
 * turn's answer goes back on the request that is waiting for it, streamed or whole, and every
 * final is ledgered so a retry (or `GET /v1/chat/completions/{id}`) gets the same answer.
 */
export class OpenaiChannel implements Channel {
  readonly type = 'openai';
  readonly id: string;
  readonly account: string;
  readonly required: boolean;
  readonly capabilities = { threads: false, edits: false, buttons: false, maxText: 1_000_000 };
  readonly authenticatesClients = true;
  readonly approvalWait: { timeoutMs: number; note: string };
  private ctx: ChannelContext | null = null;
  private readonly live = new LiveTurns();
  private readonly keys: RequestKeys;
  private readonly open = new Set<OpenRequest>();
  private unsubscribe: (() => void) | null = null;
  /** Replicas: what a turn rendered here shows to its request waiting on another replica, and back. */
  private relay: OpenaiRelay | null = null;
  private stopped = false;
  private failures = 0;

  constructor(private readonly options: OpenaiChannelOptions) {
    this.account = options.account;
    this.id = `openai:${options.account}`;
    this.required = options.required;
    this.keys = new RequestKeys(options.dedupeWindowMs);
    this.approvalWait = {
      timeoutMs: options.approvalWaitMs,
      note:
        `nobody approved this call within ${seconds(options.approvalWaitMs)} while the API client waited ` +
        `(channels.openai.accounts.${options.account}.approvalWait), so it was denied. Answer without it, ` +
        'and tell the person that this action needs an approval (an operator can approve it in the control API while the request waits).',
    };
  }

  async start(ctx: ChannelContext): Promise<void> {
    if (!ctx.clientAuth) throw new Error(`${this.id}: the channel context has no clientAuth (the OpenAI channel authenticates its clients)`);
    this.ctx = ctx;
    this.unsubscribe = ctx.clientAuth.onAccessChange((change) => this.onAccessChange(change));
    if (ctx.fanout) this.relay = new OpenaiRelay(ctx.fanout, this.live, ctx, this.account);
    await ctx.http.register(
      openaiRoutes({
        account: this.account,
        ctx,
        live: this.live,
        keys: this.keys,
        maxBodyBytes: this.options.maxBodyBytes,
        pingIntervalMs: this.options.pingIntervalMs,
        open: () => !this.stopped,
        track: (req) => {
          this.open.add(req);
          return () => this.open.delete(req);
        },
      }),
    );
  }

  /** Ends the open requests an access change takes authority from. */
  private onAccessChange(change: AccessChange): void {
    for (const r of [...this.open]) {
      const a = r.caller;
      if ((change.type === 'token_revoked' || change.type === 'token_expired') && a.tokenId === change.tokenId)
        r.cut('The client token was revoked or expired.');
      else if ((change.type === 'principal_removed' || change.type === 'principal_demoted') && a.principalId === change.principalId) {
        r.cut('Your access changed; send the request again.');
      }
    }
  }

  /**
   * Streams a turn to the requests waiting for it (by the item's client id) and ends it with the
   * ledgered final. Total: a failed step is logged and the events are read to the end; never rejects.
   */
  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const key = meta.clientId ?? `turn:${turnId}`;
    const log = this.ctx?.log;
    let ended = false;
    try {
      this.live.begin(key, to.id);
      for await (const ev of turn) {
        try {
          if (ev.type === 'turn_end') {
            ended = true;
            await this.final(to, turnId, key, ev);
          } else {
            if (ev.type === 'approval_requested') {
              log?.info({ turnId, approvalId: ev.approvalId, tool: ev.name, waitMs: this.approvalWait.timeoutMs }, 'openai: a request waits for an approval');
            }
            this.live.event(key, ev);
            this.relay?.event(key, ev);
          }
        } catch (err) {
          this.failures++;
          log?.error({ err, turnId, event: (ev as { type?: unknown }).type }, 'openai render step failed');
        }
      }
    } catch (err) {
      this.failures++;
      log?.error({ err, turnId }, 'openai render failed');
    } finally {
      if (!ended) this.live.abandon(key);
    }
  }

  private async final(to: ConversationRef, turnId: string, key: string, ev: Extract<TurnEvent, { type: 'turn_end' }>): Promise<void> {
    const text = typeof ev.text === 'string' ? ev.text : '';
    const state = typeof ev.state === 'string' ? ev.state : 'failed';
    const reason = typeof ev.reason === 'string' ? ev.reason : 'internal';
    const error = typeof ev.error === 'string' && ev.error ? ev.error : undefined;
    const content: OpenaiDeliveryContent = { text, state, reason, clientId: key, ...(error ? { error } : {}) };
    try {
      // Recorded before the answer goes out: a retry, or GET /v1/chat/completions/{id}, finds it.
      const ledger = await this.ctx!.ledger.begin(turnId, to);
      await ledger.recordFinal(0, null, content, { last: true });
    } catch (err) {
      this.failures++;
      this.ctx?.log.error({ err, turnId }, 'openai: the final could not be recorded; the waiting request still gets it');
    }
    this.live.end(key, { turnId, text, state, reason, ...(error ? { error } : {}) });
    this.relay?.end(key, turnId, to.id);
  }

  /** Shown to the conversation's running requests (an SSE comment, and `switchboard.notices` of the answer); never throws. */
  async notify(to: ConversationRef, text: string): Promise<void> {
    try {
      this.relay?.notice(to.id, String(text));
      if (this.live.notice(to.id, String(text)) === 0) this.ctx?.log.debug({ conversation: to.id }, 'openai: a notice with no request waiting');
    } catch (err) {
      this.ctx?.log.warn({ err }, 'openai notice failed');
    }
  }

  health(): ChannelHealth {
    if (this.stopped) return { state: 'down', detail: 'stopped' };
    return { state: 'up', detail: `${this.open.size} open request(s)${this.failures ? `, ${this.failures} render failure(s)` : ''}` };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.relay?.close();
    // Requests still waiting are told to retry: the turn resumes at the next start and answers the retry.
    for (const l of this.live.listeners()) l.end({ turnId: '', text: '', state: 'failed', reason: 'shutdown', notices: [] });
  }
}
