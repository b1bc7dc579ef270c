import { SwbError } from '@switchboard/agent';
import type { InboundMessage } from '@switchboard/core';

/** The code of an inbound item refused for its size. */
export const INBOX_TOO_LARGE = 'SWB_E_INBOX_TOO_LARGE';

/**
 * Refuses an inbound item whose stored form (its JSON) is over `limits.inboxMaxBytes`. The
 * channel retries it up to `limits.inboxMaxAttempts` times and then dead-letters it.
 */
export function checkInboxSize(message: InboundMessage, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes > maxBytes) {
    throw new SwbError(INBOX_TOO_LARGE, `the inbound item is ${bytes} bytes, over limits.inboxMaxBytes (${maxBytes}); it is not stored`);
  }
}
