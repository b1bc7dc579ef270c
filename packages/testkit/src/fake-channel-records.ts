import type { ConversationRef, NewDelivery, TurnEvent } from '@switchboard/core';

/** One step on the shared timeline; harnesses add `ack` / `nack` marks when the platform fake sees them. */
export interface TimelineEvent {
  seq: number;
  kind: 'accept_called' | 'accept_ok' | 'accept_failed' | 'ack' | 'nack' | 'dead_letter' | 'ledger_write';
  /** The dedupe key (inbox events, acks) or `turnId:part:kind` (ledger writes). */
  key: string;
  detail?: string;
}

/** A `recordDelivery` call as the channel made it, and whether the row already existed. */
export interface LedgerWrite {
  part: NewDelivery;
  existed: boolean;
}

/** A turn the fake gateway queued for an accepted item (what the engine would then run). */
export interface StartedTurn {
  turnId: string;
  dedupeKey: string;
  conversation: ConversationRef;
  clientId: string | null;
}

/** A call the channel made into the gateway's session, approval and command services. */
export interface ServiceRequest {
  name: string;
  args: unknown[];
}

/** How a render ended: channels must resolve; a rejection is a contract breach. */
export type RenderOutcome = { ok: true } | { ok: false; error: unknown };

/** A turn being fed to a channel's render one event at a time. */
export interface LiveTurn {
  push(event: TurnEvent): void;
  /** Ends the event stream (as the engine does after `turn_end`). */
  end(): void;
  readonly result: Promise<RenderOutcome>;
}

type Waiter = { match: (e: TimelineEvent) => boolean; resolve: (e: TimelineEvent) => void };

/** The ordered record a fake channel env keeps, with waiters for steps still to come. */
export class Timeline {
  readonly events: TimelineEvent[] = [];
  private readonly waiters = new Set<Waiter>();

  mark(kind: TimelineEvent['kind'], key: string, detail?: string): TimelineEvent {
    const e: TimelineEvent = { seq: this.events.length + 1, kind, key, ...(detail !== undefined ? { detail } : {}) };
    this.events.push(e);
    for (const w of [...this.waiters]) {
      if (!w.match(e)) continue;
      this.waiters.delete(w);
      w.resolve(e);
    }
    return e;
  }

  waitFor(match: (e: TimelineEvent) => boolean, timeoutMs: number): Promise<TimelineEvent> {
    const past = this.events.find(match);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`fake channel env: no matching timeline event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(w);
    });
  }
}
