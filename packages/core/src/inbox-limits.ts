import { SwbError, SwbErrorCode } from '@switchboard/agent';
import type { InboundMessage } from './channel.js';

/** The code of an inbound item refused for its size. */
export const INBOX_TOO_LARGE = SwbErrorCode.InboxTooLarge;

/**
 * The refusal of an inbound item whose stored form (its JSON) is over `limits.inboxMaxBytes`, or
 * null when it fits. The channel retries a refused item up to `limits.inboxMaxAttempts` times and
 * then dead-letters it.
 */
export function inboxTooLarge(message: InboundMessage, maxBytes: number): SwbError | null {
  const bytes = Buffer.byteLength(JSON.stringify(message));
  return bytes > maxBytes
    ? new SwbError(INBOX_TOO_LARGE, `the inbound item is ${bytes} bytes, over limits.inboxMaxBytes (${maxBytes}); it is not stored`)
    : null;
}
