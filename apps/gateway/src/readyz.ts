import type { IncomingMessage } from 'node:http';
import { type Channel, isSwbError, type Storage, SwbErrorCode } from '@switchboard/core';
import type { DatabaseHealth } from './wiring/storage-health.js';
import type { LeaseView } from './wiring/replicas.js';
import type { FastifyInstance } from 'fastify';
import type { FailedAuthGate } from './auth-limiter.js';
import { sendLockedOut, verifyUnderLimiter } from './limited-verify.js';
import { bearer } from './tokens.js';
import { readSessionCookie } from './console/cookies.js';
import type { ConsoleAuth } from './console/request-auth.js';

export interface ReadyzDeps {
  channels: readonly Channel[];
  storage: Storage;
  limiter: FailedAuthGate;
  clientAddress(req: IncomingMessage): string;
  /** `token`: channel details need a `read` operator token; `public`: anyone sees them (`gateway.readyzDetails`). */
  details: 'token' | 'public';
  /** Built-in tools that may be unavailable on this host (`exec` without a working sandbox), with the reason. */
  tools: { exec: { available: boolean; sandbox: string; reason?: string } };
  /** The console's sessions: an operator's console cookie with `read` sees the details like its Bearer token would. */
  console?: ConsoleAuth;
  /** The database's state as of the last health check (`storage.healthInterval`). */
  database(): DatabaseHealth;
  /** This replica's id and the leases it holds (receivers, sessions), shown with the details. */
  replica(): { id: string; leases: readonly LeaseView[] };
}

/**
 * `/readyz`: 200 when the database answers and every required channel is up or degraded (working,
 * with recent failures), 503 while the database is down or a required channel is down or still starting. Anyone gets `{ ready, state }` (`up`; `degraded` when
 * some channel is not up but every required one works; `down`); the database, this replica (id and leases held) and each
 * channel's state and detail (ids, connection counts) and the built-in tools' availability (`tools.exec`: offered, or why not) need an operator token with `read` (or
 * `admin`) — as Bearer, or an operator's console session cookie with those scopes — unless `gateway.readyzDetails` is `public`. A presented wrong token is a failed login.
 */
/** How many inbound items were given up on, and the newest (for operators: GET /api/v1/inbox/dead-letters). */
async function deadLetterSummary(storage: Storage): Promise<{ count: number; latest?: { channel: string; failedAt: string; error: string } } | undefined> {
  try {
    const count = await storage.deadLetters.count();
    if (count === 0) return { count };
    const [d] = await storage.deadLetters.list({ limit: 1 });
    return d ? { count, latest: { channel: `${d.channel}:${d.account}`, failedAt: d.failedAt.toISOString(), error: d.error } } : { count };
  } catch (err) {
    // The database went away since the last health check: the rest of the answer still stands.
    if (isSwbError(err, SwbErrorCode.StorageUnavailable)) return undefined;
    throw err;
  }
}

export async function registerReadyz(app: FastifyInstance, deps: ReadyzDeps): Promise<void> {
  app.get('/readyz', async (req, reply) => {
    const health = deps.channels.map((c) => ({ c, h: c.health() }));
    const database = deps.database();
    // A degraded channel still works (recent task failures, a slow platform): only down or not yet started fails readiness.
    // Without its database the core can take no message (DESIGN §5): not ready, whatever the channels say.
    const ready = database.state === 'up' && health.every(({ c, h }) => !c.required || h.state === 'up' || h.state === 'degraded');
    const state = !ready ? 'down' : health.every(({ h }) => h.state === 'up') ? 'up' : 'degraded';
    const status = ready ? 200 : 503;
    let detailed = deps.details === 'public';
    const secret = bearer(req.headers.authorization);
    const cookie = deps.console && req.headers.authorization === undefined ? readSessionCookie(req.headers.cookie) : null;
    if (cookie !== null && deps.console && !detailed) {
      // A console session that ended, or a member's, simply gets the public answer.
      const s = (
        await deps.console.sessions.resolve(cookie).catch((err: unknown) => {
          if (isSwbError(err, SwbErrorCode.StorageUnavailable)) return null;
          throw err;
        })
      )?.session;
      detailed = s?.kind === 'operator' && (s.scopes.includes('read') || s.scopes.includes('admin'));
    } else if (req.headers.authorization !== undefined) {
      // A header that is not `Bearer <token>` presents no token: a plain 401 that never counts.
      if (!secret) return reply.code(401).send({ code: 'unauthorized', message: 'Send an operator token as Authorization: Bearer <token>.' });
      let verified: Awaited<ReturnType<typeof verifyUnderLimiter>>;
      try {
        verified = await verifyUnderLimiter(deps, deps.clientAddress(req.raw), secret, 'operator');
      } catch (err) {
        // The token cannot be checked without the database: the public answer, and which engine is away.
        if (!isSwbError(err, SwbErrorCode.StorageUnavailable)) throw err;
        return reply.code(503).send({ ready: false, state: 'down', database: { engine: database.engine, state: 'down' } });
      }
      if (verified.locked) return sendLockedOut(reply, verified.retryAfterSec);
      const token = verified.token;
      if (!token) return reply.code(401).send({ code: 'unauthorized', message: 'The operator token is wrong or revoked.' });
      if (!token.scopes.includes('read') && !token.scopes.includes('admin')) {
        return reply.code(403).send({ code: 'forbidden', message: 'Readiness details need the "read" scope.' });
      }
      detailed = true;
    }
    if (!detailed) return reply.code(status).send({ ready, state });
    const channels = Object.fromEntries(health.map(({ c, h }) => [c.id, { ...h, required: c.required }]));
    const deadLetters = database.state === 'up' ? await deadLetterSummary(deps.storage) : undefined;
    // A tool that cannot run is not offered; readiness is about the channels, so it only shows here.
    return reply.code(status).send({ ready, state, database, replica: deps.replica(), channels, ...(deadLetters ? { deadLetters } : {}), tools: deps.tools });
  });
}
