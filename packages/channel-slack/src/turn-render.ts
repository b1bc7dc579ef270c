import type { WebClient } from '@slack/web-api';
import { type ConversationRef, type TurnEvent, type TurnLedger, ToolStatusBoard } from '@switchboard/core';
import type { Logger } from 'pino';
import type { SlackDeliveryContent } from './answered-threads.js';
import type { ApprovalBoard } from './approval-board.js';
import { approvalDoneMessage, approvalRequestMessage, describeDecider } from './approvals.js';
import { slackDraftText } from './draft-status.js';
import { chunkMrkdwn, escapeMrkdwn, toMrkdwn } from './mrkdwn.js';
import { retryAfterMs, slackErrorCode } from './web.js';

/** What rendering one turn needs from its channel. */
export interface RenderDeps {
  /** Finals, approvals: retries with Retry-After honoured. */
  api: WebClient;
  /** Draft posts and edits: fail fast on 429 (the next edit carries the text anyway). */
  drafts: WebClient;
  editIntervalMs: number;
  board: ApprovalBoard;
  log: Logger;
  /** The channel's fault boundary: a failed step is recorded there (logged with the conversation, counted in health). */
  fault?(task: string, err: unknown): void;
  /** Scrubs known secret values out of tool status lines (the gateway's scrubber). */
  scrub?: (text: string) => string;
}

type TurnEnd = Extract<TurnEvent, { type: 'turn_end' }>;
type ApprovalRequested = Extract<TurnEvent, { type: 'approval_requested' }>;
type ApprovalResolved = Extract<TurnEvent, { type: 'approval_resolved' }>;

const GONE = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed', 'channel_not_found']);
const APPROVAL_TAG = 'approval:';

/** The final message text: the answer as mrkdwn, plus the error or note when there is one. */
export function finalMrkdwn(ev: TurnEnd): string {
  const parts: string[] = [];
  if (ev.text.trim() !== '') parts.push(toMrkdwn(ev.text));
  if (ev.state !== 'completed') {
    const fallback = ev.state === 'interrupted' ? 'The answer was stopped.' : 'The answer failed.';
    parts.push(`:warning: ${escapeMrkdwn(ev.error ?? fallback)}`);
  } else if (ev.error) {
    parts.push(`_${escapeMrkdwn(ev.error)}_`);
  }
  return parts.length > 0 ? parts.join('\n\n') : '_(no text in this answer)_';
}

/**
 * Renders one turn into a Slack conversation: a draft message edited (throttled) as text streams,
 * with a status line per tool call below the text (`🔧 name summary…`, then `✅`/`❌`; tool events
 * only mark the draft dirty, so a progress flood coalesces into the same throttled edits), then the
 * final answer in chunks (the turn's text alone, never the status lines), every step recorded in the turn's {@link TurnLedger} so a
 * resumed turn edits its recorded draft and never posts a recorded final part again. Ledger parts:
 * draft 0 is the streaming draft, drafts 1… the approval messages, finals 0… the answer's chunks.
 */
export class TurnRender {
  private raw = '';
  private draftTs: string | null = null;
  private draftGone = false;
  private approvalParts = 0;
  /** A complete assistant message ended: the next streamed text starts a new paragraph. */
  private gap = false;
  private dirty = false;
  private done = false;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private lastEdit = 0;
  private holdUntil = 0;
  private readonly log: Logger;
  private readonly tools: ToolStatusBoard;

  constructor(
    private readonly deps: RenderDeps,
    private readonly to: ConversationRef,
    turnId: string,
    private readonly ledger: TurnLedger,
  ) {
    this.log = deps.log.child({ turnId, conversation: to.id });
    this.tools = new ToolStatusBoard(deps.scrub);
    // What an earlier process already delivered for this turn: its draft and approval messages.
    for (const [part, r] of ledger.drafts) {
      if (part === 0) this.draftTs = r.platformMessageId;
      else {
        this.approvalParts = Math.max(this.approvalParts, part);
        const id = r.content.reason?.startsWith(APPROVAL_TAG) ? r.content.reason.slice(APPROVAL_TAG.length) : null;
        if (id && r.platformMessageId) this.deps.board.remember(id, { channel: r.conversationId, ts: r.platformMessageId, tool: r.content.state ?? 'tool' });
      }
    }
  }

  /** The final parts recorded (by an earlier render of this turn, or this one). */
  private get finals(): ReadonlyMap<number, unknown> {
    return this.ledger.finals;
  }

  /** Handles one event; errors are logged, never thrown (one turn's trouble stays in that turn). */
  async on(ev: TurnEvent): Promise<void> {
    try {
      switch (ev.type) {
        case 'text_delta':
          if (this.finals.size > 0 || this.done) return;
          if (this.gap && this.raw !== '') this.raw += '\n\n';
          this.gap = false;
          this.raw += ev.text;
          this.dirty = true;
          this.schedule();
          return;
        case 'assistant_message':
          this.gap = true;
          return;
        case 'tool_start':
        case 'tool_progress':
        case 'tool_end':
          if (this.finals.size > 0 || this.done || !this.tools.apply(ev)) return;
          this.dirty = true;
          this.schedule();
          return;
        case 'attempt_reset':
          this.raw = '';
          this.gap = false;
          this.dirty = this.draftTs !== null;
          this.schedule();
          return;
        case 'approval_requested':
          return await this.postApproval(ev);
        case 'approval_resolved':
          return await this.resolveApproval(ev);
        case 'turn_end':
          return await this.finish(ev);
        default:
          return;
      }
    } catch (err) {
      if (this.deps.fault) this.deps.fault(`render ${ev.type}`, err);
      else this.log.error({ code: slackErrorCode(err), event: ev.type }, 'slack render step failed');
    }
  }

  /** The stream ended without a turn_end (suspended for shutdown): stop editing, keep the draft for the resume. */
  async close(): Promise<void> {
    this.done = true;
    clearTimeout(this.timer);
    await this.chain;
  }

  private post(text: string, extra: Record<string, unknown> = {}) {
    return this.deps.api.chat.postMessage({
      channel: this.to.id,
      text,
      ...(this.to.thread ? { thread_ts: this.to.thread } : {}),
      unfurl_links: false,
      unfurl_media: false,
      ...extra,
    });
  }

  private schedule(): void {
    if (this.done || this.timer || !this.dirty || this.draftGone) return;
    const now = Date.now();
    const wait = this.draftTs === null && this.lastEdit === 0 ? 0 : Math.max(0, this.lastEdit + this.deps.editIntervalMs - now, this.holdUntil - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.chain = this.chain.then(() => this.pushDraft());
    }, wait);
  }

  private async pushDraft(): Promise<void> {
    if (this.done || !this.dirty) return;
    this.dirty = false;
    this.lastEdit = Date.now();
    const text = slackDraftText(this.raw, this.tools.text());
    const empty = text === '';
    try {
      if (this.draftTs === null) {
        if (empty) return;
        const res = await this.deps.drafts.chat.postMessage({
          channel: this.to.id,
          text,
          ...(this.to.thread ? { thread_ts: this.to.thread } : {}),
          unfurl_links: false,
          unfurl_media: false,
        });
        this.draftTs = res.ts ?? null;
        await this.record(0, 'draft', this.draftTs, { text: '' });
        this.log.info({ ts: this.draftTs }, 'slack draft recorded');
      } else {
        await this.deps.drafts.chat.update({ channel: this.to.id, ts: this.draftTs, text: empty ? '…' : text });
      }
    } catch (err) {
      const wait = retryAfterMs(err);
      if (wait !== null) this.holdUntil = Date.now() + wait;
      if (GONE.has(slackErrorCode(err))) this.draftGone = true;
      else this.dirty = true;
      this.log.warn({ code: slackErrorCode(err), retryAfterMs: wait }, 'slack draft update skipped');
    }
    this.schedule();
  }

  private record(
    part: number,
    kind: 'draft' | 'final',
    ts: string | null,
    fields: { text: string; state?: string; reason?: string; error?: string },
    opts: { last?: boolean } = {},
  ) {
    // The room thread is kept with each part, so the bot still knows its threads after a restart.
    const content: SlackDeliveryContent = this.to.kind === 'room' && this.to.thread ? { ...fields, thread: this.to.thread } : fields;
    return kind === 'final' ? this.ledger.recordFinal(part, ts, content, opts) : this.ledger.recordDraft(part, ts, content);
  }

  private async finish(ev: TurnEnd): Promise<void> {
    this.done = true;
    clearTimeout(this.timer);
    await this.chain;
    // A message steered into another turn is answered there.
    if (ev.reason === 'steered') return;
    // A draft call that was rate limited set a Retry-After: the final waits it out like the drafts do.
    const hold = this.holdUntil - Date.now();
    if (hold > 0) {
      this.log.info({ waitMs: hold }, 'slack final waits for Retry-After');
      await new Promise((r) => setTimeout(r, hold));
    }
    const chunks = chunkMrkdwn(finalMrkdwn(ev));
    let reusedDraft = this.draftTs === null || this.finals.has(0);
    for (const [i, text] of chunks.entries()) {
      if (this.finals.has(i)) continue;
      let ts: string | null = null;
      if (i === 0 && this.draftTs && !this.draftGone) {
        try {
          await this.deps.api.chat.update({ channel: this.to.id, ts: this.draftTs, text });
          ts = this.draftTs;
          reusedDraft = true;
        } catch (err) {
          if (!GONE.has(slackErrorCode(err))) throw err;
        }
      }
      ts ??= (await this.post(text)).ts ?? null;
      // The last part goes with the turn's end unless a draft is still to delete after it.
      const last = i === chunks.length - 1 && (reusedDraft || !this.draftTs || this.draftGone);
      await this.record(i, 'final', ts, { text, state: ev.state, reason: ev.reason, ...(ev.error ? { error: ev.error } : {}) }, { last });
    }
    if (!reusedDraft && this.draftTs && !this.draftGone) {
      await this.deps.api.chat.delete({ channel: this.to.id, ts: this.draftTs }).catch((err: unknown) => {
        this.log.warn({ code: slackErrorCode(err) }, 'could not delete the slack draft');
      });
    }
  }

  /** Sends a pending draft edit now, so text streamed before a button message stays above it. */
  private async flushDraft(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.chain = this.chain.then(() => this.pushDraft());
    }
    await this.chain;
  }

  private async postApproval(ev: ApprovalRequested): Promise<void> {
    if (this.deps.board.get(ev.approvalId)) return;
    await this.flushDraft();
    const body = approvalRequestMessage({
      approvalId: ev.approvalId,
      tool: ev.name,
      summary: ev.summary,
      expiresAt: ev.expiresAt,
      ...(ev.source ? { source: ev.source } : {}),
      ...(ev.choices ? { choices: ev.choices } : {}),
    });
    const res = await this.post(body.text, { blocks: body.blocks });
    const ts = res.ts ?? null;
    await this.record(++this.approvalParts, 'draft', ts, { text: body.text, state: ev.name, reason: `${APPROVAL_TAG}${ev.approvalId}` });
    if (ts) this.deps.board.remember(ev.approvalId, { channel: this.to.id, ts, tool: ev.name });
  }

  private async resolveApproval(ev: ApprovalResolved): Promise<void> {
    const at = this.deps.board.get(ev.approvalId);
    if (!at || this.deps.board.pressedHere(ev.approvalId)) return void this.deps.board.forget(ev.approvalId);
    this.deps.board.forget(ev.approvalId);
    const body = approvalDoneMessage(
      at.tool,
      ev.by === 'system' ? 'closed' : ev.allowed ? 'allowed' : 'denied',
      describeDecider(ev.by, this.deps.board.deciders),
    );
    await this.deps.api.chat.update({ channel: at.channel, ts: at.ts, text: body.text, blocks: body.blocks });
  }
}
