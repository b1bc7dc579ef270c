import type { DeliveryRecord, NewDelivery, TurnEvent } from '@switchboard/core';
import type { CompletionUsage } from './wire.js';

/** How a turn ended, as a request is answered with it (live, or from the delivery ledger). */
export interface Answer {
  turnId: string;
  text: string;
  state: string;
  reason: string;
  error?: string;
  /** The agent the request addressed (the `model` of the answer). */
  agentId?: string;
  notices: string[];
  usage?: CompletionUsage;
}

/** What the ledger keeps of an answer (the channel's own `agent` field beside the common ones). */
export type OpenaiDeliveryContent = NewDelivery['content'] & { agent?: string };

/** The answer a recorded final gives. */
export function answerOf(rec: DeliveryRecord): Answer {
  const c = rec.content as OpenaiDeliveryContent;
  return {
    turnId: rec.turnId,
    text: typeof c.text === 'string' ? c.text : '',
    state: c.state ?? 'completed',
    reason: c.reason ?? 'completed',
    ...(c.error ? { error: c.error } : {}),
    ...(typeof c.agent === 'string' ? { agentId: c.agent } : {}),
    notices: [],
  };
}

/** One request waiting for its turn. Contract: must not throw. */
export interface Listener {
  /** More answer text (in order; the first call brings everything streamed before it joined). */
  text(delta: string): void;
  /** A line the stream shows as an SSE comment (approvals, notices). */
  comment(line: string): void;
  /** The turn ended. Called once. */
  end(answer: Answer): void;
}

/** One client request id's turn as it streams (see {@link LiveTurns}). */
class LiveRequest {
  /** The text given to listeners so far. */
  sent = '';
  /** The turn's text so far, as the transcript will join it (model calls separated by a blank line). */
  private turnText = '';
  /** Where the current model call's text begins in {@link turnText} (an `attempt_reset` cuts back to it). */
  private attemptStart = 0;
  private separatorDue = false;
  readonly listeners = new Set<Listener>();
  readonly notices: string[] = [];
  readonly usage: CompletionUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  conversationId: string | null = null;
  /** True from a render's start to its end: the entry is kept even while nobody listens (a retry may join). */
  rendering = false;

  /** Folds one event in; returns the text to send now, if any. */
  onEvent(ev: TurnEvent): string {
    switch (ev.type) {
      case 'text_delta': {
        if (typeof ev.text !== 'string' || ev.text === '') return '';
        if (this.separatorDue && this.turnText.length > 0) this.turnText += '\n\n';
        this.separatorDue = false;
        this.turnText += ev.text;
        // A retried model call may stream different text: only text that extends what was sent goes out.
        if (this.turnText.length > this.sent.length && this.turnText.startsWith(this.sent)) {
          const delta = this.turnText.slice(this.sent.length);
          this.sent = this.turnText;
          return delta;
        }
        return '';
      }
      case 'attempt_reset':
        this.turnText = this.turnText.slice(0, this.attemptStart);
        return '';
      case 'assistant_message': {
        const said = Array.isArray(ev.message?.content) && ev.message.content.some((b) => b.type === 'text' && b.text.length > 0);
        if (said) this.separatorDue = true;
        this.attemptStart = this.turnText.length;
        return '';
      }
      case 'usage': {
        const u = ev.usage;
        if (!u) return '';
        const prompt = (u.inputTokens ?? 0) + (u.cacheReadInputTokens ?? 0) + (u.cacheCreationInputTokens ?? 0);
        this.usage.prompt_tokens += prompt;
        this.usage.completion_tokens += u.outputTokens ?? 0;
        this.usage.total_tokens = this.usage.prompt_tokens + this.usage.completion_tokens;
        return '';
      }
      default:
        return '';
    }
  }

  /** The rest of the final text that was not streamed (empty when the stream went another way). */
  rest(final: string): string {
    return final.startsWith(this.sent) ? final.slice(this.sent.length) : '';
  }
}

/** Answers kept after their turn ended, for a retry that arrives just then (the ledger has them too). */
const RECENT_ANSWERS = 1000;

/**
 * The requests waiting for turns, keyed by the inbound item's client id (the request's dedupe
 * key, echoed as `RenderMeta.clientId`): the original request and every retry of it listen to the
 * same turn. A listener that joins mid-stream gets the text so far first.
 */
export class LiveTurns {
  private readonly live = new Map<string, LiveRequest>();
  private readonly recent = new Map<string, Answer>();

  /** Adds a listener for a client id (a request of `conversationId`); returns the function that removes it. */
  listen(clientId: string, listener: Listener, conversationId: string): () => void {
    const done = this.recent.get(clientId);
    if (done) {
      listener.end(done);
      return () => undefined;
    }
    const req = this.entry(clientId);
    req.conversationId ??= conversationId;
    if (req.sent) listener.text(req.sent);
    req.listeners.add(listener);
    return () => {
      req.listeners.delete(listener);
      this.dropIfIdle(clientId, req);
    };
  }

  /** The live request of a client id (created for a render that starts before any listener). */
  entry(clientId: string): LiveRequest {
    let req = this.live.get(clientId);
    if (!req) this.live.set(clientId, (req = new LiveRequest()));
    return req;
  }

  /** A render of the client id's turn starts (for the conversation's notices). */
  begin(clientId: string, conversationId: string): void {
    const req = this.entry(clientId);
    req.rendering = true;
    req.conversationId = conversationId;
  }

  /** Folds an event into the client id's request and streams any new text to its listeners. */
  event(clientId: string, ev: TurnEvent): void {
    const req = this.entry(clientId);
    const delta = req.onEvent(ev);
    if (delta) for (const l of req.listeners) l.text(delta);
    if (ev.type === 'approval_requested') {
      for (const l of req.listeners) l.comment(`approval ${String(ev.approvalId)} pending: ${oneLine(String(ev.name))}`);
    } else if (ev.type === 'approval_resolved') {
      for (const l of req.listeners) l.comment(`approval ${String(ev.approvalId)} ${ev.allowed ? 'allowed' : 'denied'} by ${oneLine(String(ev.by))}`);
    }
  }

  /** A gateway notice for a conversation: kept with each of its running requests and shown on their streams. */
  notice(conversationId: string, text: string): number {
    let n = 0;
    for (const req of this.live.values()) {
      if (req.conversationId !== conversationId) continue;
      req.notices.push(text);
      for (const l of req.listeners) l.comment(`notice: ${oneLine(text)}`);
      n++;
    }
    return n;
  }

  /** Ends the client id's turn: every listener gets the answer, with the text it has not seen yet. */
  end(clientId: string, answer: Omit<Answer, 'notices' | 'usage'>): void {
    const req = this.entry(clientId);
    const full: Answer = { ...answer, notices: [...req.notices], ...(req.usage.total_tokens > 0 ? { usage: { ...req.usage } } : {}) };
    const rest = req.rest(answer.text);
    for (const l of req.listeners) {
      if (rest) l.text(rest);
      l.end(full);
    }
    req.listeners.clear();
    this.live.delete(clientId);
    this.recent.set(clientId, full);
    while (this.recent.size > RECENT_ANSWERS) this.recent.delete(this.recent.keys().next().value!);
  }

  /** A render that ended without a turn end (its stream broke): the entry is dropped once nobody listens. */
  abandon(clientId: string): void {
    const req = this.live.get(clientId);
    if (!req) return;
    req.rendering = false;
    this.dropIfIdle(clientId, req);
  }

  /** Whether a request for the client id waits here (has a listener). */
  waiting(clientId: string): boolean {
    return (this.live.get(clientId)?.listeners.size ?? 0) > 0;
  }

  /** Every listener, for a shutdown. */
  listeners(): Listener[] {
    return [...this.live.values()].flatMap((r) => [...r.listeners]);
  }

  /** Requests being answered now (for health). */
  get size(): number {
    return this.live.size;
  }

  private dropIfIdle(clientId: string, req: LiveRequest): void {
    if (req.listeners.size === 0 && !req.rendering && this.live.get(clientId) === req) this.live.delete(clientId);
  }
}

/** A value safe to put on one SSE comment line. */
export function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ').slice(0, 200);
}
