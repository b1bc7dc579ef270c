import type { FaultBoundary } from '@switchboard/core';
import type { Api } from 'grammy';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { Logger } from 'pino';
import { describeError, isMessageGone, isNotModified, isParseError } from './errors.js';
import { toTelegramHtml } from './format.js';

/** Where a message goes: a chat and, in forum supergroups, a topic. */
export interface Target {
  chatId: number;
  thread?: number;
  /** Reply to this message (ignored if it is gone). */
  replyTo?: number;
}

/** Extra fields of a send or edit. */
export interface SendExtra {
  markup?: InlineKeyboardMarkup;
}

/**
 * Thin, safe wrappers over the Bot API calls the adapter makes. Link previews are always off
 * (model output must not fetch URLs through previews); formatted text falls back to plain text
 * on a "can't parse entities" error; "message is not modified" counts as success.
 */
export class Sender {
  constructor(
    private readonly api: Api,
    private readonly token: string,
    private readonly log: Logger,
    /** Failures of the calls that never throw (typing, button answers, deletes) are counted here. */
    private readonly faults: FaultBoundary,
    private readonly channelId: string,
  ) {}

  private base(t: Target) {
    return {
      link_preview_options: { is_disabled: true },
      ...(t.thread !== undefined ? { message_thread_id: t.thread } : {}),
      ...(t.replyTo !== undefined ? { reply_parameters: { message_id: t.replyTo, allow_sending_without_reply: true } } : {}),
    };
  }

  /** Sends plain text; returns the message id. Throws on failure. */
  async sendPlain(t: Target, text: string, extra: SendExtra = {}): Promise<number> {
    const m = await this.api.sendMessage(t.chatId, text, { ...this.base(t), ...(extra.markup ? { reply_markup: extra.markup } : {}) });
    return m.message_id;
  }

  /** Sends Markdown-ish text as HTML, or as plain text if Telegram cannot parse it. Throws on other failures. */
  async sendFormatted(t: Target, text: string): Promise<number> {
    try {
      const m = await this.api.sendMessage(t.chatId, toTelegramHtml(text), { ...this.base(t), parse_mode: 'HTML' });
      return m.message_id;
    } catch (err) {
      if (!isParseError(err)) throw err;
      this.log.warn({ error: describeError(err, this.token) }, 'telegram: formatted message refused; sending plain text');
      return this.sendPlain(t, text);
    }
  }

  /**
   * Edits a message's text (HTML when `formatted`, falling back to plain). Returns `gone` when the
   * message no longer exists or cannot be edited; throws on other failures.
   */
  async edit(t: Target, messageId: number, text: string, opts: { formatted?: boolean } & SendExtra = {}): Promise<'ok' | 'gone'> {
    const extra = { link_preview_options: { is_disabled: true }, ...(opts.markup ? { reply_markup: opts.markup } : {}) };
    try {
      if (opts.formatted) {
        try {
          await this.api.editMessageText(t.chatId, messageId, toTelegramHtml(text), { ...extra, parse_mode: 'HTML' });
          return 'ok';
        } catch (err) {
          if (!isParseError(err)) throw err;
          this.log.warn({ error: describeError(err, this.token) }, 'telegram: formatted edit refused; using plain text');
        }
      }
      await this.api.editMessageText(t.chatId, messageId, text, extra);
      return 'ok';
    } catch (err) {
      if (isNotModified(err)) return 'ok';
      if (isMessageGone(err)) return 'gone';
      throw err;
    }
  }

  /** Deletes a message; false (logged) if that failed. */
  async delete(t: Target, messageId: number): Promise<boolean> {
    try {
      await this.api.deleteMessage(t.chatId, messageId);
      return true;
    } catch (err) {
      if (isMessageGone(err)) return true;
      this.faults.record({ channel: this.channelId, task: 'delete a message', conversation: String(t.chatId) }, err);
      return false;
    }
  }

  /** Shows "typing…"; failures are logged, never thrown. */
  async typing(t: Target): Promise<void> {
    try {
      await this.api.sendChatAction(t.chatId, 'typing', t.thread !== undefined ? { message_thread_id: t.thread } : {});
    } catch (err) {
      this.faults.record({ channel: this.channelId, task: 'typing indicator', conversation: String(t.chatId) }, err);
    }
  }

  /** Answers a button press; failures are logged, never thrown. Telegram allows 200 characters. */
  async answerCallback(id: string, text: string, alert = false): Promise<void> {
    try {
      await this.api.answerCallbackQuery(id, { text: text.length > 200 ? `${text.slice(0, 199)}…` : text, show_alert: alert });
    } catch (err) {
      this.faults.record({ channel: this.channelId, task: 'answer a button press' }, err);
    }
  }
}
