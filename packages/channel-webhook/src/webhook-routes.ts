import type { AcceptResult, ApprovalAnswer, ChannelContext, InboundMessage } from '@switchboard/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyRequest } from './signing.js';
import { approvalDecisionSchema, firstIssue, inboundMessageSchema, type InboundWebhookMessage } from './wire.js';

/** The URL path a platform POSTs an account's messages to. */
export function webhookPath(account: string): string {
  return `/channels/webhook/${account}`;
}

/** What the routes need from their channel. */
export interface WebhookRouteOptions {
  account: string;
  secret: string;
  replayWindowMs: number;
  maxBodyBytes: number;
  ctx: ChannelContext;
}

const APPROVAL_ID = /^[A-Za-z0-9_-]{1,128}$/;

function sendError(reply: FastifyReply, status: number, code: string, message: string, extra: Record<string, unknown> = {}): FastifyReply {
  return reply.code(status).send({ code, message, ...extra });
}

/** Verifies the signature, then parses the JSON body with `schema`; on failure the reply is sent and null returned. */
async function verifiedBody<T>(o: WebhookRouteOptions, req: FastifyRequest, reply: FastifyReply, schema: z.ZodType<T>): Promise<T | null> {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const verdict = verifyRequest(o.secret, { timestamp: req.headers[TIMESTAMP_HEADER], signature: req.headers[SIGNATURE_HEADER] }, raw, o.replayWindowMs);
  if (!verdict.ok) {
    req.log.warn({ channel: `webhook:${o.account}`, reason: verdict.message }, 'webhook request refused: bad signature or timestamp');
    await sendError(reply, 401, 'unauthorized', verdict.message);
    return null;
  }
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    await sendError(reply, 415, 'unsupported_media_type', 'Send the body as Content-Type: application/json.');
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    await sendError(reply, 400, 'bad_json', `The body is not valid JSON: ${(err as Error).message}`);
    return null;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    await sendError(reply, 400, 'bad_request', `${field}: ${message}`, { field });
    return null;
  }
  return parsed.data;
}

function toInbound(account: string, m: InboundWebhookMessage): InboundMessage {
  const conversation = { channel: 'webhook', account, id: m.conversation.id, kind: m.conversation.kind, ...(m.conversation.thread ? { thread: m.conversation.thread } : {}) };
  return {
    dedupeKey: m.id,
    channel: 'webhook',
    account,
    conversation,
    sender: { identity: `webhook:${m.sender.id}`, ...(m.sender.name ? { displayName: m.sender.name } : {}), isBot: m.sender.isBot ?? false },
    kind: m.conversation.kind,
    mentioned: m.conversation.kind === 'dm' ? true : (m.mentioned ?? false),
    text: m.text,
    platformId: m.id,
    receivedAt: new Date(),
  };
}

const APPROVAL_STATUS: Record<ApprovalAnswer['outcome'], number> = { decided: 200, already_decided: 409, forbidden: 403, not_found: 404 };

/**
 * The account's inbound routes: messages and approval decisions. The plugin is encapsulated, so
 * its raw-body parser and error handler apply to these routes only.
 */
export function webhookRoutes(o: WebhookRouteOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    // The signature covers the exact bytes sent, so the body is kept raw and parsed only once verified.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: o.maxBodyBytes }, (_req, body, done) => done(null, body));
    app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
      if (err.statusCode === 413) return sendError(reply, 413, 'payload_too_large', `The body is larger than ${o.maxBodyBytes} bytes.`);
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return sendError(reply, err.statusCode, 'bad_request', err.message);
      if (err.code === 'SWB_E_SHUTTING_DOWN') return sendError(reply.header('retry-after', '5'), 503, 'shutting_down', err.message);
      req.log.error({ err }, 'webhook request failed');
      return sendError(reply, 500, 'internal', 'The gateway could not take this request; send it again (the message id makes a retry safe).');
    });

    app.post(webhookPath(o.account), async (req, reply) => {
      const m = await verifiedBody(o, req, reply, inboundMessageSchema);
      if (!m) return reply;
      const res: AcceptResult = await o.ctx.accept(toInbound(o.account, m));
      return reply.code(202).send({ accepted: true, gate: res.gate ?? 'admitted', duplicate: res.duplicate, turnId: res.turnId });
    });

    app.post<{ Params: { id: string } }>(`${webhookPath(o.account)}/approvals/:id`, async (req, reply) => {
      const d = await verifiedBody(o, req, reply, approvalDecisionSchema);
      if (!d) return reply;
      if (!APPROVAL_ID.test(req.params.id)) return sendError(reply, 404, 'not_found', 'No such approval.');
      const who = await o.ctx.principalFor(`webhook:${d.senderId}`);
      if (!who) return sendError(reply, 403, 'forbidden', `Sender ${d.senderId} is not a known person on this gateway.`);
      const r = await o.ctx.decideApproval(req.params.id, d.decision, d.always ?? false, { principalId: who.principalId });
      return reply.code(APPROVAL_STATUS[r.outcome]).send({ approvalId: req.params.id, ...r });
    });
  };
}
