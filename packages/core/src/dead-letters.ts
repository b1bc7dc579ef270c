import { isSwbError, SwbErrorCode } from './errors.js';

/**
 * Dead letters: an inbound item that could not be stored or processed after a bounded number of
 * attempts is recorded as failed (an inbox row with the error), the channel moves past it, and
 * the sender — when known — gets a short apology. Nothing behind it waits.
 */

/** What a channel reports about an item it gives up on. */
export interface DeadLetterInput {
  channel: string;
  account: string;
  /** The item's dedupe key: a redelivery of it is then recognised and skipped. */
  dedupeKey: string;
  /** The platform conversation, when known. */
  conversation?: string;
  /** The sender's identity (`telegram:<id>`), when known. */
  sender?: string;
  /** A short, secret-free summary of the item (kind, size, a text preview). */
  summary: string;
  /** Why the last attempt failed. */
  error: string;
  attempts: number;
  receivedAt: Date;
}

/** A recorded dead letter. */
export interface DeadLetter extends DeadLetterInput {
  id: string;
  failedAt: Date;
}

/** The apology a sender gets when their message is dead-lettered. */
export const DEAD_LETTER_APOLOGY = 'Sorry, I could not process your last message and had to skip it. Please send it again, perhaps shorter or in another form.';

/**
 * Counts failed attempts per item key (e.g. an update id) for channels whose platform redelivers
 * (webhooks): after `max` failures the item is to be dead-lettered. Bounded memory: the oldest
 * keys are forgotten past `capacity`.
 */
export class AttemptCounter {
  private readonly counts = new Map<string, number>();

  constructor(
    readonly max: number,
    private readonly capacity = 10_000,
  ) {}

  /** Records one failed attempt; returns the count so far and whether the item is out of attempts. */
  fail(key: string): { attempts: number; exhausted: boolean } {
    const attempts = (this.counts.get(key) ?? 0) + 1;
    this.counts.delete(key);
    this.counts.set(key, attempts);
    while (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value as string);
    return { attempts, exhausted: attempts >= this.max };
  }

  /** Forgets a key (it succeeded or was dead-lettered). */
  clear(key: string): void {
    this.counts.delete(key);
  }
}

/**
 * Whether a failure to accept an item counts towards its attempts. A refusal because the gateway
 * is shutting down does not: the item is left for the next start (the platform redelivers it),
 * never dead-lettered.
 */
export function countsAsAttempt(err: unknown): boolean {
  return !isSwbError(err, SwbErrorCode.ShuttingDown) && !isSwbError(err, SwbErrorCode.StorageUnavailable);
}

/** A one-line preview of inbound text for a dead letter's summary (never the whole payload). */
export function previewText(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}… (${text.length} characters)` : oneLine;
}
