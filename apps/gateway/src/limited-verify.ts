import type { Storage, TokenKind, TokenRecord } from '@switchboard/core';
import type { FastifyReply } from 'fastify';
import type { AuthLimiter } from './auth-limiter.js';
import { verifySecret } from './tokens.js';

/** What {@link verifyUnderLimiter} found: the address is locked out, or the token (null: wrong or revoked). */
export type LimitedVerify = { locked: true; retryAfterSec: number } | { locked: false; token: TokenRecord | null };

/**
 * Verifies a presented secret under the failed-auth limiter, keyed on the client address: a
 * locked-out address is refused before the secret is looked at; otherwise the attempt is settled
 * with the outcome (a wrong secret counts as a failure). One path for every HTTP route that takes a token.
 */
export async function verifyUnderLimiter(
  deps: { storage: Storage; limiter: AuthLimiter },
  address: string,
  secret: string,
  kind: TokenKind,
): Promise<LimitedVerify> {
  const attempt = deps.limiter.begin(address);
  if (attempt.locked) return { locked: true, retryAfterSec: attempt.retryAfterSec };
  let token: TokenRecord | null = null;
  try {
    token = await verifySecret(deps.storage, secret, kind);
  } finally {
    attempt.settle(token !== null);
  }
  return { locked: false, token };
}

/** The 429 a locked-out address gets, with `retry-after`. */
export function sendLockedOut(reply: FastifyReply, retryAfterSec: number): FastifyReply {
  return reply
    .code(429)
    .header('retry-after', String(retryAfterSec))
    .send({ code: 'too_many_failed_attempts', message: `Too many failed attempts from this address; retry in ${retryAfterSec} s.` });
}
