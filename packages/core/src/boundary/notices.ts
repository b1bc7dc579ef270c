import type { PairingRequest } from '../storage.js';
import { span } from './pairing-rules.js';

/**
 * What the boundary tells a sender, in one place: each function returns the notice's text.
 * Durations are spans in milliseconds from now.
 */
export const notices = {
  /** The sender's bucket is empty (sent once per empty spell). */
  rateLimited: (): string => 'You are sending messages faster than this assistant accepts. Please slow down and try again in a minute.',

  /** An identity asked for access again within `pairing.cooldown`. */
  cooldown: (retryInMs: number): string =>
    `You asked for access recently, so this message was not kept. You can try again in ${span(retryInMs)} (pairing.cooldown).`,

  /** A pending request is over `pairing.maxHeld` or `pairing.maxHeldBytes` (told once per request). */
  heldOverflow: (code: string, limit: 'maxHeld' | 'maxHeldBytes', pairing: { maxHeld: number; maxHeldBytes: number }): string => {
    const kept =
      limit === 'maxHeld'
        ? `at most ${pairing.maxHeld} messages (pairing.maxHeld)`
        : `at most ${pairing.maxHeldBytes} bytes of messages (pairing.maxHeldBytes)`;
    return `This message was not kept: while pairing code ${code} waits for an operator, ${kept} are kept. Later messages are not kept either; send them again once you are approved.`;
  },

  /** A new pairing code; `kept` is false when the first message alone was over `maxHeldBytes`. */
  pairingCode: (request: PairingRequest, validForMs: number, kept: boolean, maxHeldBytes: number): string => {
    const keptText = kept
      ? 'Your message is kept and will be answered once you are approved.'
      : `Your message was too large to keep (pairing.maxHeldBytes is ${maxHeldBytes} bytes); send it again once you are approved.`;
    return `Hi! This assistant needs an operator's approval before it answers you. Your pairing code is ${request.code} (valid for ${span(validForMs)}). ${keptText}`;
  },

  /** Another message held under a pending request. */
  held: (request: PairingRequest, maxHeld: number): string =>
    `Still waiting for an operator to approve pairing code ${request.code}. Your message is kept (${request.heldCount} of at most ${maxHeld}).`,

  /** A pending request expired early to make room (`pairing.maxPending`). */
  evicted: (request: PairingRequest, cooldownMs: number): string =>
    `Your pairing code ${request.code} was withdrawn before an operator approved it, because newer access requests needed the slot, so your message was discarded. You can send a new message after ${span(cooldownMs)} to get a new code.`,

  /** An operator approved the request; `answering` when held messages are answered now. */
  approved: (answering: boolean): string =>
    answering ? 'You have been approved. Answering your message now.' : 'You have been approved. Send your message again and it will be answered.',

  /** An operator rejected the request. */
  rejected: (): string => 'Your access request was declined, and your message was discarded.',

  /** The code passed `pairing.codeTtl`. */
  expired: (request: PairingRequest): string =>
    `Your pairing code ${request.code} expired before an operator approved it, so your message was discarded. Send a new message to get a new code.`,
};
