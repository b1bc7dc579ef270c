import {
  type ConversationRef,
  type DeliveryContent,
  type FaultBoundary,
  type RenderMeta,
  type TurnEvent,
  type TurnLedger,
  ToolStatusBoard,
} from '@switchboard/core';
import type { Logger } from 'pino';
import type { ApprovalMessages } from './approvals.js';
import { chunkText } from './chunk.js';
import { draftWithStatus } from './draft-status.js';
import { describeError } from './errors.js';
import type { Sender, Target } from './sender.js';

/** What one turn's renderer needs from its channel. */
export interface RenderDeps {
  sender: Sender;
  approvals: ApprovalMessages;
  log: Logger;
  token: string;
  typingIntervalMs: number;
  editIntervalMs: number;
  /** Where a failed turn render or draft update is counted (health). */
  faults: FaultBoundary;
  channelId: string;
  /** Scrubs known secret values out of tool status lines (the gateway's scrubber). */
  scrub?: (text: string) => string;
}

type TurnEnd = Extract<TurnEvent, { type: 'turn_end' }>;

/** The text a finished turn shows: the answer, plus the error or note when there is one. */
export function finalText(ev: TurnEnd): string {
  const parts: string[] = [];
  if (ev.text.trim()) parts.push(ev.text.trim());
  if (ev.state !== 'completed') parts.push(`⚠️ ${ev.error ?? (ev.state === 'interrupted' ? 'The answer was stopped.' : 'The answer failed.')}`);
  else if (ev.error) parts.push(`(${ev.error})`);
  return parts.join('\n\n');
}

/**
 * Renders one turn into a chat: typing while it runs, a plain-text draft edited at most once per
 * edit interval (the streamed text and, below it, a status line per tool call: `🔧 name summary…`
 * while it runs, `✅`/`❌` once it ended — tool events only mark the draft dirty, so a progress
 * flood coalesces into the same throttled edits), then the final answer formatted and chunked; the
 * final is the turn's text alone, never the status lines. Drafts and finals are ledgered
 * (the turn's {@link TurnLedger}), so a resumed turn reuses its recorded draft and skips finals
 * already sent.
 */
export class TurnRenderer {
  private text = '';
  private shown = '';
  private draftId: number | null;
  private lastEdit = 0;
  private timer: NodeJS.Timeout | null = null;
  private typingTimer: NodeJS.Timeout | null = null;
  private typingBusy = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly target: Target;
  private readonly tools: ToolStatusBoard;

  constructor(
    private readonly deps: RenderDeps,
    private readonly to: ConversationRef,
    private readonly turnId: string,
    private readonly ledger: TurnLedger,
    private readonly meta: RenderMeta,
  ) {
    this.target = { chatId: Number(to.id), ...(to.thread ? { thread: Number(to.thread) } : {}) };
    const draft = ledger.drafts.get(0)?.platformMessageId;
    this.draftId = draft ? Number(draft) : null;
    this.tools = new ToolStatusBoard(deps.scrub);
  }

  /** The final parts recorded (by an earlier render of this turn, or this one). */
  private get finals(): ReadonlyMap<number, unknown> {
    return this.ledger.finals;
  }

  /** Consumes the turn's events. Never throws. */
  async run(turn: AsyncIterable<TurnEvent>): Promise<void> {
    this.startTyping();
    try {
      for await (const ev of turn) {
        switch (ev.type) {
          case 'text_delta':
            this.append(ev.text);
            break;
          case 'attempt_reset':
            this.text = '';
            break;
          case 'tool_start':
          case 'tool_progress':
          case 'tool_end':
            if (this.finals.size === 0 && this.tools.apply(ev)) this.schedule();
            break;
          case 'approval_requested':
            this.stopTyping();
            await this.deps.approvals.request(this.target, ev);
            break;
          case 'approval_resolved':
            await this.deps.approvals.resolved(ev);
            this.startTyping();
            break;
          case 'turn_end':
            await this.finish(ev);
            break;
          default:
            break;
        }
      }
    } catch (err) {
      this.deps.faults.record({ channel: this.deps.channelId, task: `render turn ${this.turnId}`, conversation: this.to.id }, err);
    } finally {
      this.stopTyping();
      if (this.timer) clearTimeout(this.timer);
    }
  }

  private startTyping(): void {
    if (this.typingTimer) return;
    const tick = () => {
      if (this.typingBusy) return;
      this.typingBusy = true;
      void this.deps.sender.typing(this.target).finally(() => (this.typingBusy = false));
    };
    tick();
    this.typingTimer = setInterval(tick, this.deps.typingIntervalMs);
  }

  private stopTyping(): void {
    if (this.typingTimer) clearInterval(this.typingTimer);
    this.typingTimer = null;
  }

  private append(delta: string): void {
    // Finals already sent (a resumed turn): the draft message now holds the answer; leave it be.
    if (this.finals.size > 0) return;
    this.text += delta;
    this.schedule();
  }

  /** Arms the draft edit: at most one per edit interval, carrying whatever changed by then. */
  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastEdit + this.deps.editIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.chain = this.chain.then(() => this.flush());
    }, wait);
  }

  private async flush(): Promise<void> {
    const preview = draftWithStatus(this.text, this.tools.text());
    if (!preview || preview === this.shown) return;
    try {
      if (this.draftId === null) {
        const id = await this.deps.sender.sendPlain(this.firstTarget(), preview);
        this.draftId = id;
        await this.ledger.recordDraft(0, String(id), { text: preview });
        this.deps.log.info({ event: 'telegram_draft_recorded', turnId: this.turnId, messageId: id }, 'telegram: draft sent and recorded');
      } else if ((await this.deps.sender.edit(this.target, this.draftId, preview)) === 'gone') {
        this.draftId = null;
        this.shown = '';
        return;
      }
      this.shown = preview;
    } catch (err) {
      this.deps.faults.record({ channel: this.deps.channelId, task: `draft update of turn ${this.turnId}`, conversation: this.to.id }, err);
    } finally {
      this.lastEdit = Date.now();
    }
  }

  private async finish(ev: TurnEnd): Promise<void> {
    this.stopTyping();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
    if (ev.reason === 'steered') return;
    const chunks = chunkText(finalText(ev));
    if (chunks.length === 0) {
      if (this.draftId !== null && !this.finals.has(0)) await this.deps.sender.delete(this.target, this.draftId);
      if (!this.finals.has(0)) await this.ledger.recordFinal(0, null, finalContent('', ev), { last: true });
      return;
    }
    for (const [i, chunk] of chunks.entries()) {
      if (this.finals.has(i)) continue;
      let id: number | null = null;
      if (i === 0 && this.draftId !== null) id = await this.replaceDraft(this.draftId, chunk);
      id ??= await this.deps.sender.sendFormatted(i === 0 ? this.firstTarget() : this.target, chunk);
      await this.ledger.recordFinal(i, id === null ? null : String(id), finalContent(chunk, ev), { last: i === chunks.length - 1 });
    }
  }

  /** Edits the draft into the first final chunk; null if it is gone (or the edit failed: then it is deleted). */
  private async replaceDraft(draftId: number, chunk: string): Promise<number | null> {
    try {
      return (await this.deps.sender.edit(this.target, draftId, chunk, { formatted: true })) === 'ok' ? draftId : null;
    } catch (err) {
      this.deps.log.warn(
        { error: describeError(err, this.deps.token), turnId: this.turnId },
        'telegram: could not edit the draft into the answer; sending it anew',
      );
      await this.deps.sender.delete(this.target, draftId);
      return null;
    }
  }

  /** In rooms the first message replies to the person's message, so the answer is easy to place. */
  private firstTarget(): Target {
    const replyTo = this.to.kind === 'room' && this.meta.clientId && /^\d+$/.test(this.meta.clientId) ? Number(this.meta.clientId) : undefined;
    return replyTo !== undefined ? { ...this.target, replyTo } : this.target;
  }
}

/** A final part's ledger content: its text and how the turn ended. */
function finalContent(text: string, ev: TurnEnd): DeliveryContent {
  return { text, state: ev.state, reason: ev.reason, ...(ev.error ? { error: ev.error } : {}) };
}
