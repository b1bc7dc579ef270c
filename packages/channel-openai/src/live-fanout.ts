import type { ChannelContext, ChannelFanout, ConversationRef, TurnEvent } from '@switchboard/core';
import { z } from 'zod';
import { answerOf, type LiveTurns } from './live-turns.js';

// Replicas (issue 20): a request waits on the replica that took it, while its turn may run on
// another (the one holding the session's lease). The replica that renders relays what the waiting
// request shows — text, approvals, usage, notices — as frames (staged in the database by the
// fan-out); the end names the turn only, and the waiting replica reads the answer from the ledger.

/** What one relayed frame says (the parts of a turn a waiting request shows). */
export type RelayFrame =
  | { k: 'text'; text: string }
  | { k: 'reset' }
  | { k: 'said' }
  | { k: 'usage'; input: number; output: number; cacheRead: number; cacheWrite: number }
  | { k: 'approval_requested'; approvalId: string; name: string }
  | { k: 'approval_resolved'; approvalId: string; allowed: boolean; by: string }
  | { k: 'end'; turnId: string; conversationId: string }
  | { k: 'notice'; text: string };

const count = z.number().int().min(0).max(1e12);
const short = z.string().max(500);
const relayFrameSchema = z.discriminatedUnion('k', [
  z.strictObject({ k: z.literal('text'), text: z.string().max(1_000_000) }),
  z.strictObject({ k: z.literal('reset') }),
  z.strictObject({ k: z.literal('said') }),
  z.strictObject({ k: z.literal('usage'), input: count, output: count, cacheRead: count, cacheWrite: count }),
  z.strictObject({ k: z.literal('approval_requested'), approvalId: short, name: short }),
  z.strictObject({ k: z.literal('approval_resolved'), approvalId: short, allowed: z.boolean(), by: short }),
  z.strictObject({ k: z.literal('end'), turnId: short, conversationId: short }),
  z.strictObject({ k: z.literal('notice'), text: z.string().max(100_000) }),
]);

/** A relayed frame read back, or null when it is not one. */
export function relayFrameOf(raw: unknown): RelayFrame | null {
  const r = relayFrameSchema.safeParse(raw);
  return r.success ? r.data : null;
}

/** The frame that relays `ev` to a waiting request on another replica; null for what a request never shows. */
export function relayFrameFor(ev: TurnEvent): RelayFrame | null {
  switch (ev.type) {
    case 'text_delta':
      return typeof ev.text === 'string' && ev.text !== '' ? { k: 'text', text: ev.text } : null;
    case 'attempt_reset':
      return { k: 'reset' };
    case 'assistant_message':
      return Array.isArray(ev.message?.content) && ev.message.content.some((b) => b.type === 'text' && b.text.length > 0) ? { k: 'said' } : null;
    case 'usage': {
      const u = ev.usage;
      if (!u) return null;
      return {
        k: 'usage',
        input: u.inputTokens ?? 0,
        output: u.outputTokens ?? 0,
        cacheRead: u.cacheReadInputTokens ?? 0,
        cacheWrite: u.cacheCreationInputTokens ?? 0,
      };
    }
    case 'approval_requested':
      return { k: 'approval_requested', approvalId: String(ev.approvalId), name: String(ev.name) };
    case 'approval_resolved':
      return { k: 'approval_resolved', approvalId: String(ev.approvalId), allowed: ev.allowed === true, by: String(ev.by) };
    default:
      return null;
  }
}

/** The turn event a relayed frame stands for (what `LiveTurns.event` folds), for the frames that are events. */
function eventOf(f: RelayFrame): TurnEvent | null {
  switch (f.k) {
    case 'text':
      return { type: 'text_delta', text: f.text };
    case 'reset':
      return { type: 'attempt_reset', reason: 'relayed' };
    case 'said':
      return { type: 'assistant_message', message: { role: 'assistant', content: [{ type: 'text', text: ' ' }] }, model: '' } as TurnEvent;
    case 'usage':
      return {
        type: 'usage',
        usage: { inputTokens: f.input, outputTokens: f.output, cacheReadInputTokens: f.cacheRead, cacheCreationInputTokens: f.cacheWrite },
        model: '',
      } as TurnEvent;
    case 'approval_requested':
      return { type: 'approval_requested', approvalId: f.approvalId, toolUseId: '', name: f.name, summary: '', expiresAt: '' };
    case 'approval_resolved':
      return { type: 'approval_resolved', approvalId: f.approvalId, toolUseId: '', allowed: f.allowed, by: f.by };
    default:
      return null;
  }
}

/**
 * Both directions of the relay for one OpenAI account: `send*` from the replica that renders a
 * turn; what arrives is folded into this replica's waiting requests (only requests waiting here:
 * nothing is kept for keys nobody listens to).
 */
export class OpenaiRelay {
  private readonly unsubscribe: () => void;

  constructor(
    private readonly fanout: ChannelFanout,
    private readonly live: LiveTurns,
    private readonly ctx: ChannelContext,
    private readonly account: string,
  ) {
    this.unsubscribe = fanout.onFrames((audience, frames) => this.received(audience, frames));
  }

  /** Relays an event of the turn for request `key`. */
  event(key: string, ev: TurnEvent): void {
    const f = relayFrameFor(ev);
    if (f) this.fanout.send(key, [f]);
  }

  /** Relays the end of the turn for request `key` (its answer is in the ledger). */
  end(key: string, turnId: string, conversationId: string): void {
    this.fanout.send(key, [{ k: 'end', turnId, conversationId }]);
  }

  /** Relays a notice for the conversation's waiting requests. */
  notice(conversationId: string, text: string): void {
    this.fanout.send(`conversation:${conversationId}`, [{ k: 'notice', text }]);
  }

  close(): void {
    this.unsubscribe();
  }

  private received(audience: string, frames: readonly unknown[]): void {
    for (const raw of frames) {
      const f = relayFrameOf(raw);
      if (!f) {
        this.ctx.log.warn({ channel: `openai:${this.account}` }, 'openai: ignored a malformed frame from another replica');
        continue;
      }
      if (f.k === 'notice') {
        if (audience.startsWith('conversation:')) this.live.notice(audience.slice('conversation:'.length), f.text);
        continue;
      }
      if (!this.live.waiting(audience)) continue;
      if (f.k === 'end') {
        void this.answer(audience, f.turnId, f.conversationId);
        continue;
      }
      const ev = eventOf(f);
      if (ev) this.live.event(audience, ev);
    }
  }

  /** Ends a request waiting here with the answer the other replica recorded. */
  private async answer(key: string, turnId: string, conversationId: string): Promise<void> {
    const to: ConversationRef = { channel: 'openai', account: this.account, id: conversationId, kind: 'dm' };
    try {
      const rec = (await this.ctx.ledger.begin(turnId, to)).finals.get(0);
      if (rec) this.live.end(key, answerOf(rec));
      else this.ctx.log.warn({ turnId }, 'openai: another replica ended a turn whose answer is not in the ledger; the request gets it on retry');
    } catch (err) {
      this.ctx.log.warn({ err, turnId }, 'openai: reading an answer another replica recorded failed; the request gets it on retry');
    }
  }
}
