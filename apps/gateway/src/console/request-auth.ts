import type { Role, Scope, TokenRecord } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type OperatorCheck, requireOperatorScope } from '../limited-verify.js';
import { safeEqual } from '../tokens.js';
import type { ConsoleSession, ConsoleSessions } from './console-sessions.js';
import type { EventHub } from './event-hub.js';
import { readSessionCookie } from './cookies.js';

/**
 * Who may call a control-API route: `operator` (the default: an operator token, as Bearer or a
 * console session, with the route's scope), `member` (a member's console session only), `viewer`
 * (an operator, or a member's console session) or `open` (the route authenticates by itself).
 */
export type RouteAccess = 'operator' | 'member' | 'viewer' | 'open';

/** A member signed in to the console with a client token. */
export interface MemberAuth {
  principalId: string;
  role: Role;
  tokenId: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (default `operator`). */
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** The member behind a client console session (routes with `member` or `viewer` access). */
    member?: MemberAuth;
    /** The console session the request was authenticated by (cookie auth only). */
    consoleSession?: ConsoleSession;
  }
}

/** The console's sign-in state the control API reads (absent: `console.enabled` is false). */
export interface ConsoleAuth {
  sessions: ConsoleSessions;
  /** `console.publicOrigin`, or the listener's `http://host:port` once it listens. */
  publicOrigin(): string | undefined;
  /** Whether a `default` WebSocket account exists for the web chat. */
  webChat: boolean;
  /** The live stream's viewers (`GET /api/v1/events`). */
  hub: EventHub;
}

const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The header a cookie-authenticated state-changing request must carry. */
export const CSRF_HEADER = 'x-csrf-token';

/**
 * Authenticates one control-API request by its route's access. Without an `Authorization` header
 * and with a session cookie, the console session stands in for its token: the token's scopes as
 * stored now, and `X-CSRF-Token` on every state-changing method (a form posted from another site
 * carries the cookie at most, never the header). Bearer auth is unchanged. Sends the refusal and
 * returns false, or returns true with `req.operator` / `req.member` set.
 */
export async function authenticateRequest(deps: OperatorCheck & { console?: ConsoleAuth }, req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const access = req.routeOptions.config.access ?? 'operator';
  if (access === 'open') return true;
  const cookie = deps.console && req.headers.authorization === undefined ? readSessionCookie(req.headers.cookie) : null;
  if (cookie !== null && deps.console) return cookieAuth(deps.console, access, cookie, req, reply);
  if (access === 'member') {
    await reply.code(401).send({ code: 'unauthorized', message: 'Sign in to the console with your client token (POST /api/v1/auth/session).' });
    return false;
  }
  const token = await requireOperatorScope(deps, req, reply, req.routeOptions.config.scope);
  if (!token) return false;
  req.operator = token;
  return true;
}

async function cookieAuth(auth: ConsoleAuth, access: RouteAccess, cookie: string, req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  // A cookie is 256 random bits: a wrong one is a stale session (restart, logout), not a guess, so it never counts as a failed login.
  const resolved = await auth.sessions.resolve(cookie);
  if (!resolved) {
    await reply
      .code(401)
      .send({ code: 'unauthorized', message: 'The console session has ended (signed out, expired, or its token was revoked); sign in again.' });
    return false;
  }
  const { session, token } = resolved;
  if (STATE_CHANGING.has(req.method)) {
    const presented = req.headers[CSRF_HEADER];
    if (typeof presented !== 'string' || !safeEqual(presented, session.csrfToken)) {
      await reply.code(403).send({ code: 'csrf', message: `A console request that changes state needs the ${CSRF_HEADER} header from sign-in.` });
      return false;
    }
  }
  req.consoleSession = session;
  if (session.kind === 'client') {
    if (access === 'operator') {
      await reply.code(403).send({ code: 'forbidden', message: "A member's console session reaches only its own data (/api/v1/me)." });
      return false;
    }
    req.member = { principalId: session.principalId, role: session.role, tokenId: session.tokenId };
    return true;
  }
  if (access === 'member') {
    await reply.code(403).send({ code: 'forbidden', message: 'This route is for members signed in with a client token.' });
    return false;
  }
  const scope: Scope | undefined = req.routeOptions.config.scope;
  if (scope && !token.scopes.includes(scope) && !token.scopes.includes('admin')) {
    await reply.code(403).send({ code: 'forbidden', message: `This route needs the "${scope}" scope.` });
    return false;
  }
  req.operator = token satisfies TokenRecord;
  return true;
}
