import type { IncomingMessage } from 'node:http';
import type { Scope, Storage, TokenKind, TokenRecord } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FailedAuthGate } from './auth-limiter.js';
import { bearer, verifySecret } from './tokens.js';

/** What {@link verifyUnderLimiter} found: the address is locked out, or the token (null: wrong or revoked). */
export type LimitedVerify = { locked: true; retryAfterSec: number } | { locked: false; token: TokenRecord | null };

/**
 * Verifies a presented secret under the failed-auth limiter, keyed on the client address: a
 * locked-out address is refused before the secret is looked at; otherwise the attempt is settled
 * with the outcome (a wrong secret counts as a failure). One path for every HTTP route that takes a token.
 */
export async function verifyUnderLimiter(
  deps: { storage: Storage; limiter: FailedAuthGate },
  address: string,
  secret: string,
  kind: TokenKind,
): Promise<LimitedVerify> {
  const attempt = await deps.limiter.begin(address);
  if (attempt.locked) return { locked: true, retryAfterSec: attempt.retryAfterSec };
  let token: TokenRecord | null = null;
  try {
    token = await verifySecret(deps.storage, secret, kind);
  } finally {
    await attempt.settle(token !== null);
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

/** What {@link requireOperatorScope} checks a request against. */
export interface OperatorCheck {
  storage: Storage;
  limiter: FailedAuthGate;
  /** The client key of a request (trusted proxies honoured, IPv6 by /64). */
  clientAddress(req: IncomingMessage): string;
}

/**
 * The operator token of a request that needs `scope` (`admin` stands in for every scope; none:
 * any operator token), or null once the refusal was sent: 401 without `Authorization: Bearer`
 * (never a failed attempt) or with a wrong or revoked token, 429 while the address is locked
 * out, 403 without the scope. The control API and `/metrics` check operators this way.
 */
export async function requireOperatorScope(
  deps: OperatorCheck,
  req: FastifyRequest,
  reply: FastifyReply,
  scope: Scope | undefined,
): Promise<TokenRecord | null> {
  const secret = bearer(req.headers.authorization);
  if (!secret) {
    await reply.code(401).send({ code: 'unauthorized', message: 'An operator token is required (Authorization: Bearer <token>).' });
    return null;
  }
  const verified = await verifyUnderLimiter(deps, deps.clientAddress(req.raw), secret, 'operator');
  if (verified.locked) {
    await sendLockedOut(reply, verified.retryAfterSec);
    return null;
  }
  const token = verified.token;
  if (!token) {
    await reply.code(401).send({ code: 'unauthorized', message: 'The operator token is wrong or revoked.' });
    return null;
  }
  if (scope && !token.scopes.includes(scope) && !token.scopes.includes('admin')) {
    await reply.code(403).send({ code: 'forbidden', message: `This route needs the "${scope}" scope.` });
    return null;
  }
  return token;
}
