import type { IncomingMessage } from 'node:http';
import type { FileShelf, Storage } from '@switchboard/core';
import type { FastifyInstance } from 'fastify';
import { sendError } from './api/deps.js';
import type { FailedAuthGate } from './auth-limiter.js';
import { sendLockedOut, verifyUnderLimiter } from './limited-verify.js';
import { bearer } from './tokens.js';

/** What the download route needs. */
export interface FileRouteDeps {
  shelf: Pick<FileShelf, 'get'>;
  storage: Storage;
  /** Failed-auth rate limiting, shared with the control API and the WebSocket channel. */
  limiter: FailedAuthGate;
  clientAddress(req: IncomingMessage): string;
}

/** `filename*` for Content-Disposition (RFC 6266 / 5987), with a plain ASCII fallback. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * `GET /files/{id}`: a file `send_file` offered on the WebSocket channel. Needs the person's own
 * client token (`Authorization: Bearer`): 401 without a valid one (failed attempts count towards
 * the address's lockout, 429 then), 404 for an id that is unknown, expired or someone else's
 * (the same answer, so ids cannot be probed), else the bytes as an attachment.
 */
export function registerFileDownloads(app: FastifyInstance, deps: FileRouteDeps): void {
  app.get<{ Params: { id: string } }>('/files/:id', async (req, reply) => {
    const secret = bearer(req.headers.authorization);
    if (!secret) return sendError(reply, 401, 'unauthorized', 'A client token is required (Authorization: Bearer <token>).');
    const verified = await verifyUnderLimiter(deps, deps.clientAddress(req.raw), secret, 'client');
    if (verified.locked) return sendLockedOut(reply, verified.retryAfterSec);
    const principalId = verified.token?.principalId ?? null;
    if (!principalId) return sendError(reply, 401, 'unauthorized', 'The client token is missing, wrong or revoked.');
    const file = deps.shelf.get(req.params.id, principalId);
    if (!file) return sendError(reply, 404, 'not_found', 'No such file, or its download expired.');
    return reply
      .header('content-type', file.mimeType)
      .header('content-disposition', contentDisposition(file.name))
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'private, no-store')
      .send(Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength));
  });
}
