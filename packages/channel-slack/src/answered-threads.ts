import type { DeliveryRecord, NewDelivery } from '@switchboard/core';

/** What the Slack renderer records per delivered part: the ledger content plus the room thread it went to. */
export type SlackDeliveryContent = NewDelivery['content'] & { thread?: string };

/** The room thread a ledger row was posted in, if the renderer recorded one. */
export function threadOfDelivery(r: Pick<DeliveryRecord, 'content'>): string | undefined {
  const t = (r.content as SlackDeliveryContent).thread;
  return typeof t === 'string' && t !== '' ? t : undefined;
}

const DEFAULT_MAX = 20_000;

/**
 * The room threads the bot takes part in, so that a reply in such a thread counts as addressed to
 * the bot even without a mention. A thread joins when a mentioned message in it is admitted or
 * the bot renders an answer into it; after a restart, a channel's threads are read once from the
 * delivery ledger (every part the bot posts in a room thread records that thread).
 */
export class AnsweredThreads {
  /** `channel thread` keys, oldest first (re-added on use). */
  private readonly threads = new Set<string>();
  /** Channels whose ledger rows were read (or are being read). */
  private readonly loaded = new Map<string, Promise<void>>();

  constructor(
    /** Every final part the bot delivered in a channel (the ledger). */
    private readonly finals: (channel: string) => Promise<DeliveryRecord[]>,
    private readonly max = DEFAULT_MAX,
  ) {}

  add(channel: string, thread: string): void {
    const key = `${channel} ${thread}`;
    this.threads.delete(key);
    this.threads.add(key);
    if (this.threads.size <= this.max) return;
    const oldest = this.threads.keys().next().value!;
    this.threads.delete(oldest);
    // A forgotten thread is found again in the ledger on its next unmentioned reply.
    this.loaded.delete(oldest.slice(0, oldest.indexOf(' ')));
  }

  /** Whether the bot is part of `thread` in `channel`. Throws when the ledger cannot be read. */
  async has(channel: string, thread: string): Promise<boolean> {
    const key = `${channel} ${thread}`;
    if (this.threads.has(key)) return true;
    await this.load(channel);
    return this.threads.has(key);
  }

  private load(channel: string): Promise<void> {
    let p = this.loaded.get(channel);
    if (!p) {
      p = this.finals(channel).then(
        (rows) => {
          for (const r of rows) {
            const t = threadOfDelivery(r);
            if (t && !this.threads.has(`${channel} ${t}`)) this.add(channel, t);
          }
        },
        (err: unknown) => {
          this.loaded.delete(channel);
          throw err;
        },
      );
      this.loaded.set(channel, p);
    }
    return p;
  }
}
