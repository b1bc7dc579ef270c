import type { TokenRecord } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendError, type RouteModule } from '../api/deps.js';
import { sendLockedOut, verifyUnderLimiter } from '../limited-verify.js';
import type { ConsoleIdentity, ConsoleSession } from './console-sessions.js';
import { cameOverTls, clearedCookie, readSessionCookie, sessionCookie } from './cookies.js';
import type { ConsoleAuth } from './request-auth.js';

const signIn = z.strictObject({ token: z.string().min(1).max(300) });

/** What the sign-in routes answer: who is signed in, the CSRF token, when it ends, and whether web chat is on. */
function sessionBody(s: ConsoleSession, webChat: boolean) {
  const who =
    s.kind === 'operator' ? { kind: s.kind, name: s.name, scopes: [...s.scopes] } : { kind: s.kind, name: s.name, principalId: s.principalId, role: s.role };
  return { ...who, csrfToken: s.csrfToken, expiresAt: s.expiresAt.toISOString(), webChat };
}

function disabled(reply: FastifyReply): FastifyReply {
  return sendError(reply, 404, 'console_disabled', 'The console is disabled (console.enabled is false).');
}

/**
 * Console sign-in (`/api/v1/auth/session`): POST a token once (operator or client, under the same
 * failed-auth lockout as the control API) for an `HttpOnly; SameSite=Strict` session cookie;
 * GET who is signed in; DELETE signs out (cookie auth, so the CSRF header is needed).
 */
export const authRoutes: RouteModule = async (app, deps) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth: ConsoleAuth | undefined = deps.console;

  r.post(
    '/auth/session',
    {
      config: { access: 'open' },
      schema: { tags: ['console'], summary: 'Sign in to the console with an operator or client token (sets the session cookie)', body: signIn },
    },
    async (req, reply) => {
      if (!auth) return disabled(reply);
      // A browser says when a request comes from another site: a sign-in is never made for someone from elsewhere.
      if (req.headers['sec-fetch-site'] === 'cross-site') return sendError(reply, 403, 'cross_site', 'Sign-in from another site is refused.');
      const secret = req.body.token;
      const kind = secret.startsWith('swb_c_') ? 'client' : 'operator';
      const verified = await verifyUnderLimiter(deps, deps.clientAddress(req.raw), secret, kind);
      if (verified.locked) return sendLockedOut(reply, verified.retryAfterSec);
      const identity = verified.token ? await identityOf(deps, verified.token) : null;
      if (!verified.token || !identity) return sendError(reply, 401, 'unauthorized', 'The token is wrong, revoked or expired.');
      const { cookie, session, saved } = auth.sessions.open(identity, verified.token);
      await saved;
      await deps.storage.audit.append({
        actor: identity.kind === 'operator' ? `operator:${identity.name}` : `principal:${identity.principalId}`,
        action: 'console.signin',
        target: null,
        detail: { tokenId: verified.token.id, kind: identity.kind },
      });
      const maxAge = (session.expiresAt.getTime() - Date.now()) / 1000;
      reply.header('set-cookie', sessionCookie(cookie, maxAge, cameOverTls(req.raw, auth.publicOrigin())));
      reply.header('cache-control', 'no-store');
      return sessionBody(session, auth.webChat);
    },
  );

  r.get(
    '/auth/session',
    { config: { access: 'open' }, schema: { tags: ['console'], summary: 'Who is signed in to the console (401 when nobody)' } },
    async (req, reply) => {
      if (!auth) return disabled(reply);
      const cookie = readSessionCookie(req.headers.cookie);
      const resolved = cookie === null ? null : await auth.sessions.resolve(cookie);
      if (!resolved) return sendError(reply, 401, 'unauthorized', 'Not signed in to the console.');
      reply.header('cache-control', 'no-store');
      return sessionBody(resolved.session, auth.webChat);
    },
  );

  r.delete(
    '/auth/session',
    { config: { access: 'viewer' }, schema: { tags: ['console'], summary: 'Sign out of the console (needs the X-CSRF-Token header)' } },
    async (req: FastifyRequest, reply) => {
      if (!auth) return disabled(reply);
      const session = req.consoleSession;
      if (!session) return sendError(reply, 400, 'no_console_session', 'This request was not made with a console session cookie.');
      auth.sessions.end(session);
      reply.header('set-cookie', clearedCookie(cameOverTls(req.raw, auth.publicOrigin())));
      return reply.code(204).send();
    },
  );
};

/** Who a verified token signs in as; null for a client token without its principal. */
async function identityOf(deps: Parameters<RouteModule>[1], token: TokenRecord): Promise<ConsoleIdentity | null> {
  if (token.kind === 'operator') return { kind: 'operator', name: token.name, scopes: token.scopes };
  if (!token.principalId) return null;
  const p = await deps.storage.principals.get(token.principalId);
  return p ? { kind: 'client', name: p.name, principalId: p.id, role: p.role } : null;
}
