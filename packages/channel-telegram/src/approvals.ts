import type { AgentEvent } from '@switchboard/agent';
import { type ApprovalAnswer, type ChannelContext, offersAlways, planChoiceLabel } from '@switchboard/core';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { Logger } from 'pino';
import { describeError } from './errors.js';
import { displayName } from './inbound.js';
import type { Sender, Target } from './sender.js';
import type { TgCallbackQuery } from './update-schema.js';

type Requested = Extract<AgentEvent, { type: 'approval_requested' }>;
type Resolved = Extract<AgentEvent, { type: 'approval_resolved' }>;

interface Shown {
  target: Target;
  messageId: number;
  text: string;
  /** The message already shows the outcome (buttons removed). */
  done: boolean;
  /** A button press is being handled: it edits the message, not the resolved event. */
  pressing: boolean;
  /** An outcome that arrived while a press was being handled. */
  late?: Resolved;
}

/** Approval messages remembered (oldest forgotten first); a forgotten one is rebuilt from the press. */
const MAX_TRACKED = 1000;
/** Room left in the 4096-character message for the tool name, expiry and the outcome line. */
const SUMMARY_LIMIT = 3500;
const CALLBACK = /^ap:([A-Za-z0-9_-]{1,56}):([adAe])$/;

/**
 * Callback data of an approval button: `ap:<approvalId>:<key>` (≤ 64 bytes). Keys: `a` approve
 * (a plan approval: its first choice, `default`), `e` approve a plan with `acceptEdits`, `d` deny,
 * `A` always allow.
 */
export function approvalCallbackData(approvalId: string, choice: 'a' | 'd' | 'A' | 'e'): string {
  return `ap:${approvalId}:${choice}`;
}

/** A plan approval's choices as button keys: `default` is `a`, `acceptEdits` is `e`; others have no button. */
const CHOICE_KEYS: Readonly<Record<string, 'a' | 'e'>> = Object.freeze({ default: 'a', acceptEdits: 'e' });

/** The plan choice a button key stands for. */
const choiceOfKey = (key: string | undefined): string | undefined => (key === 'e' ? 'acceptEdits' : key === 'a' ? 'default' : undefined);

function keyboard(approvalId: string, ev: Pick<Requested, 'source' | 'choices'>): InlineKeyboardMarkup {
  if (ev.choices) {
    const allow = ev.choices.flatMap((c) => {
      const key = Object.hasOwn(CHOICE_KEYS, c) ? CHOICE_KEYS[c] : undefined;
      return key ? [{ text: planChoiceLabel(c), callback_data: approvalCallbackData(approvalId, key) }] : [];
    });
    // A choice without a button of its own (a lowered mode) is the approval's first: plain approve takes it.
    const approve = allow.length > 0 ? allow : [{ text: 'Proceed', callback_data: approvalCallbackData(approvalId, 'a') }];
    return { inline_keyboard: [...approve.map((b) => [b]), [{ text: 'Keep planning', callback_data: approvalCallbackData(approvalId, 'd') }]] };
  }
  if (!offersAlways(ev.source)) {
    return {
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: approvalCallbackData(approvalId, 'a') },
          { text: 'Deny', callback_data: approvalCallbackData(approvalId, 'd') },
        ],
      ],
    };
  }
  return {
    inline_keyboard: [
      [
        { text: 'Approve', callback_data: approvalCallbackData(approvalId, 'a') },
        { text: 'Deny', callback_data: approvalCallbackData(approvalId, 'd') },
      ],
      [{ text: 'Always allow', callback_data: approvalCallbackData(approvalId, 'A') }],
    ],
  };
}

function outcomeLine(status: string | undefined, who: string, always = false): string {
  if (status === 'allowed') return `✅ Approved${always ? ' (always)' : ''} by ${who}`;
  if (status === 'denied') return `❌ Denied by ${who}`;
  if (status === 'expired') return '⌛ Expired without an answer';
  if (status === 'cancelled') return '🚫 Cancelled: its turn ended before an answer';
  return `Decided (${status ?? 'unknown'}) by ${who}`;
}

/** The outcome line of a resolved event: `system` closes an approval nobody answered (expired, or its turn ended). */
function resolvedLine(ev: Resolved): string {
  if (ev.allowed) return outcomeLine('allowed', ev.by);
  return ev.by === 'system' ? '⌛ Closed without an answer (expired or its turn ended)' : outcomeLine('denied', ev.by);
}

/**
 * Approval requests as chat messages with inline buttons, and the button presses that answer
 * them. A press is checked by the gateway (who may approve, atomic claim); the message is then
 * edited to show the outcome and who decided, without buttons.
 */
export class ApprovalMessages {
  private readonly shown = new Map<string, Shown>();

  constructor(
    private readonly ctx: () => ChannelContext,
    private readonly sender: Sender,
    private readonly log: Logger,
    private readonly token: string,
  ) {}

  /** Sends the request with Approve / Deny / Always allow buttons. Never throws. */
  async request(target: Target, ev: Requested): Promise<void> {
    const summary = ev.summary.length > SUMMARY_LIMIT ? `${ev.summary.slice(0, SUMMARY_LIMIT)}…` : ev.summary;
    const text = `${ev.choices ? 'Plan approval' : 'Approval needed'}: ${ev.name}\n${summary}\n\nExpires at ${ev.expiresAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}.`;
    const fits = Buffer.byteLength(approvalCallbackData(ev.approvalId, 'A')) <= 64 && CALLBACK.test(approvalCallbackData(ev.approvalId, 'A'));
    try {
      const body = fits ? text : `${text}\n(Answer it in the control API: approval ${ev.approvalId}.)`;
      const messageId = await this.sender.sendPlain(target, body, fits ? { markup: keyboard(ev.approvalId, ev) } : {});
      if (this.shown.size >= MAX_TRACKED) this.shown.delete(this.shown.keys().next().value ?? '');
      this.shown.set(ev.approvalId, {
        target: { chatId: target.chatId, ...(target.thread !== undefined ? { thread: target.thread } : {}) },
        messageId,
        text,
        done: !fits,
        pressing: false,
      });
    } catch (err) {
      this.log.error({ error: describeError(err, this.token), approvalId: ev.approvalId }, 'telegram: could not send an approval request');
    }
  }

  /** The approval was decided (anywhere): show the outcome unless a press here is doing that. */
  async resolved(ev: Resolved): Promise<void> {
    const s = this.shown.get(ev.approvalId);
    if (!s || s.done) return;
    if (s.pressing) {
      s.late = ev;
      return;
    }
    await this.finish(s, resolvedLine(ev));
  }

  /** Handles a button press. Never throws; the presser always gets an answer. */
  async press(q: TgCallbackQuery): Promise<void> {
    const m = CALLBACK.exec(q.data ?? '');
    if (!m) return this.sender.answerCallback(q.id, 'This button is not active any more.');
    const [, approvalId = '', key] = m;
    const s = this.shown.get(approvalId) ?? this.fromCallback(approvalId, q);
    try {
      const who = await this.ctx().people.principalFor(`telegram:${q.from.id}`);
      if (!who) return await this.sender.answerCallback(q.id, 'You may not answer this approval: you are not paired with this assistant.', true);
      if (s) s.pressing = true;
      // `a` on a plan approval takes its first choice (no choice sent); `e` asks for acceptEdits.
      const r: ApprovalAnswer = await this.ctx().approvals.decide(
        approvalId,
        key === 'd' ? 'deny' : 'allow',
        key === 'A',
        { principalId: who.principalId },
        key === 'e' ? choiceOfKey(key) : undefined,
      );
      await this.answer(q, r, s);
    } catch (err) {
      this.log.error({ error: describeError(err, this.token), approvalId }, 'telegram: approval button failed');
      await this.sender.answerCallback(q.id, 'Something went wrong while answering this approval. Please try again.', true);
    } finally {
      if (s) {
        s.pressing = false;
        if (!s.done && s.late) await this.finish(s, resolvedLine(s.late));
      }
    }
  }

  private async answer(q: TgCallbackQuery, r: ApprovalAnswer, s: Shown | undefined): Promise<void> {
    switch (r.outcome) {
      case 'decided': {
        const label = r.status === 'allowed' ? 'Approved' : 'Denied';
        const chose = r.choice ? ` (${r.choice} mode)` : '';
        await this.sender.answerCallback(q.id, `${label}${r.tool ? `: ${r.tool}` : ''}${chose}.`);
        if (s) await this.finish(s, `${outcomeLine(r.status, displayName(q.from), r.status === 'allowed' && /:A$/.test(q.data ?? ''))}${chose}`);
        return;
      }
      case 'already_decided':
        await this.sender.answerCallback(q.id, `Already decided (${r.status ?? 'decided'}${r.decidedBy ? ` by ${r.decidedBy}` : ''}).`, true);
        if (s && !s.done) await this.finish(s, outcomeLine(r.status, r.decidedBy ?? 'someone else'));
        return;
      case 'forbidden':
        return this.sender.answerCallback(q.id, `You may not answer this approval: ${r.reason ?? 'not allowed'}.`, true);
      case 'invalid':
        return this.sender.answerCallback(q.id, `This answer does not fit this approval: ${r.reason ?? 'not allowed'}.`, true);
      case 'not_found':
        return this.sender.answerCallback(q.id, 'This approval no longer exists.', true);
    }
  }

  /** After a restart the map is empty: the pressed message itself says where it is. */
  private fromCallback(approvalId: string, q: TgCallbackQuery): Shown | undefined {
    const msg = q.message;
    if (!msg) return undefined;
    const buttons = (msg as Record<string, unknown>).reply_markup !== undefined;
    const s: Shown = { target: { chatId: msg.chat.id }, messageId: msg.message_id, text: msg.text ?? 'Approval', done: !buttons, pressing: false };
    this.shown.set(approvalId, s);
    return s;
  }

  private async finish(s: Shown, line: string): Promise<void> {
    s.done = true;
    try {
      await this.sender.edit(s.target, s.messageId, `${s.text}\n\n${line}`);
    } catch (err) {
      this.log.warn({ error: describeError(err, this.token) }, 'telegram: could not show an approval outcome');
    }
  }
}
