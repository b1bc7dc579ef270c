import { type AcceptResult, type ChannelContext, isSwbError, SwbErrorCode } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from './wire.js';
import { errorBody } from './wire.js';

/** Who a request is: the principal and token its client token resolved to. */
export interface Caller {
  principalId: string;
  tokenId: string;
}

/** Answers with an OpenAI-style error (its headers included). */
export function send(reply: FastifyReply, e: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers ?? {})) reply.header(k, v);
  return reply.code(e.status).send(errorBody(e));
}

/** 401 with the reason. */
export const unauthorized = (message: string): ApiError => ({ status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message });

/** Resolves the request's client token (counted towards the failed-auth lockout); operator tokens never verify here. */
export async function authenticate(ctx: ChannelContext, req: FastifyRequest): Promise<Caller | ApiError> {
  const auth = ctx.clientAuth!;
  const header = req.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) return unauthorized('Send a client token as Authorization: Bearer <token> (operator tokens are not accepted here).');
  const r = await auth.verify(m[1]!, auth.addressOf(req.raw));
  if (r && 'lockedOut' in r) {
    return {
      status: 429,
      type: 'rate_limit_error',
      code: 'too_many_failed_attempts',
      message: `Too many failed attempts from this address; retry in ${r.retryAfterSec} s.`,
      headers: { 'retry-after': String(r.retryAfterSec), 'x-should-retry': 'false' },
    };
  }
  if (!r) return unauthorized('The client token is wrong, revoked or expired. Use a client token (operator tokens are not accepted here).');
  return r;
}

const GATE_ERRORS: Record<string, ApiError> = {
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    message: 'Too many messages: this one was not processed. Please slow down.',
  },
};

/** The answer to a message the boundary gate did not admit. */
export function gateError(gate: NonNullable<AcceptResult['gate']>): ApiError {
  return (
    GATE_ERRORS[gate] ?? {
      status: 403,
      type: 'permission_error',
      code: 'not_admitted',
      message: `This account does not admit you (${gate}): ask an operator to add you to channels.openai's allowFrom, or to change its dmPolicy.`,
      headers: { 'x-should-retry': 'false' },
    }
  );
}

/** The answer to an accept that failed for a reason the client can act on; null for others (a 500). */
export function acceptError(err: unknown): ApiError | null {
  if (isSwbError(err, SwbErrorCode.ShuttingDown))
    return { status: 503, type: 'server_error', code: 'shutting_down', message: 'The gateway is shutting down; retry shortly.' };
  if (isSwbError(err, SwbErrorCode.StorageUnavailable))
    return { status: 503, type: 'server_error', code: 'storage_unavailable', message: 'The gateway cannot reach its database right now; retry shortly.' };
  if (isSwbError(err, SwbErrorCode.InboxTooLarge)) return { status: 413, type: 'invalid_request_error', code: 'message_too_large', message: err.message };
  if (isSwbError(err, SwbErrorCode.UnknownAgent))
    return { status: 404, type: 'invalid_request_error', code: 'model_not_found', message: err.message, param: 'model' };
  return null;
}

/** The request's raw body as JSON (only `application/json`). */
export function parseJson(req: FastifyRequest): { ok: true; value: unknown } | { ok: false; error: ApiError } {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    return {
      ok: false,
      error: { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: 'Send the body as Content-Type: application/json.' },
    };
  }
  try {
    return { ok: true, value: JSON.parse((req.body as Buffer).toString('utf8')) };
  } catch {
    return { ok: false, error: { status: 400, type: 'invalid_request_error', code: 'invalid_json', message: 'The body is not valid JSON.' } };
  }
}

/** 404 for a `model` that names no agent. */
export const modelNotFound = (id: string): ApiError => ({
  status: 404,
  type: 'invalid_request_error',
  code: 'model_not_found',
  param: 'model',
  message: `The model "${id.slice(0, 64)}" does not exist: models are this gateway's agents (GET /v1/models lists them).`,
});
