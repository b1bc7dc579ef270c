import { type AcceptResult, type ApprovalAnswer, type ChannelContext, type InboundMessage, isSwbError, SwbErrorCode } from '@switchboard/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ReplayMemory } from './replay-memory.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, pathOf, verifyRequest } from './signing.js';
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

type Refusal = { status: number; code: string; message: string; field?: string };
type Verified = { mac: string; expiresAt: number };

/** Verifies the signature over the request's timestamp, method, path and raw body. Synchronous, so a caller can claim the MAC before any await. */
function verified(options: WebhookRouteOptions, req: FastifyRequest): Verified | Refusal {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const signed = { method: req.method, path: pathOf(req.raw.url ?? req.url), body: raw };
  const verdict = verifyRequest(
    options.secret,
    { timestamp: req.headers[TIMESTAMP_HEADER], signature: req.headers[SIGNATURE_HEADER] },
    signed,
    options.replayWindowMs,
  );
  if (!verdict.ok) {
    req.log.warn({ channel: `webhook:${options.account}`, reason: verdict.message }, 'webhook request refused: bad signature or timestamp');
    return { status: 401, code: verdict.code, message: verdict.message };
  }
  return { mac: verdict.mac, expiresAt: verdict.timestampMs + options.replayWindowMs };
}

/** Parses a verified request's JSON body with `schema`. */
function parsed<T>(req: FastifyRequest, schema: z.ZodType<T>): { data: T } | Refusal {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type))
    return { status: 415, code: 'unsupported_media_type', message: 'Send the body as Content-Type: application/json.' };
  let json: unknown;
  try {
    json = JSON.parse((req.body as Buffer).toString('utf8'));
  } catch (err) {
    return { status: 400, code: 'bad_json', message: `The body is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const r = schema.safeParse(json);
  if (r.success) return { data: r.data };
  const { field, message } = firstIssue(r.error);
  return { status: 400, code: 'bad_request', message: `${field}: ${message}`, field };
}

const isRefusal = (v: object): v is Refusal => 'status' in v;
const refuse = (reply: FastifyReply, r: Refusal) => sendError(reply, r.status, r.code, r.message, r.field !== undefined ? { field: r.field } : {});

function toInbound(account: string, m: InboundWebhookMessage): InboundMessage {
  const conversation = {
    channel: 'webhook',
    account,
    id: m.conversation.id,
    kind: m.conversation.kind,
    ...(m.conversation.thread ? { thread: m.conversation.thread } : {}),
  };
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

/** The body of a taken message request (202, and 200 for a replay of it). */
type MessageAnswer = { accepted: true; gate: string; duplicate: boolean; turnId: string | null };

/** Shared-mark values: a message request still being taken, a decision request taken. */
const PENDING = 'pending';
const TAKEN = 'taken';

const storedAnswerSchema = z.strictObject({
  accepted: z.literal(true),
  gate: z.string().max(100),
  duplicate: z.boolean(),
  turnId: z.string().max(200).nullable(),
});

/** The answer another replica stored for a message request; null while it is still being taken (or unreadable). */
export function storedAnswer(value: string): MessageAnswer | null {
  if (value === PENDING) return null;
  try {
    const r = storedAnswerSchema.safeParse(JSON.parse(value));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

const APPROVAL_STATUS: Record<ApprovalAnswer['outcome'], number> = { decided: 200, already_decided: 409, forbidden: 403, invalid: 400, not_found: 404 };

/**
 * The account's inbound routes: messages and approval decisions. The plugin is encapsulated, so
 * its raw-body parser and error handler apply to these routes only.
 */
export function webhookRoutes(options: WebhookRouteOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    // The signature covers the exact bytes sent, so the body is kept raw and parsed only once verified.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxBodyBytes }, (_req, body, done) => done(null, body));
    app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
      if (err.statusCode === 413) return sendError(reply, 413, 'payload_too_large', `The body is larger than ${options.maxBodyBytes} bytes.`);
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return sendError(reply, err.statusCode, 'bad_request', err.message);
      if (isSwbError(err, SwbErrorCode.ShuttingDown)) return sendError(reply.header('retry-after', '5'), 503, 'shutting_down', err.message);
      if (isSwbError(err, SwbErrorCode.StorageUnavailable)) {
        return sendError(
          reply.header('retry-after', '5'),
          503,
          'storage_unavailable',
          'The gateway cannot reach its database right now; send the request again shortly.',
        );
      }
      req.log.error({ err }, 'webhook request failed');
      return sendError(reply, 500, 'internal', 'The gateway could not take this request; send it again (the message id makes a retry safe).');
    });

    // Signed requests taken within the replay window (see ReplayMemory): a message's answer, an approval decision's claim.
    const messages = new ReplayMemory<Promise<MessageAnswer>>();
    const decisions = new ReplayMemory<true>();
    // Replicas on one database: the same memory, shared (ctx.marks); a single gateway has none.
    const marks = options.ctx.marks;
    const markKey = (kind: 'm' | 'd', mac: string) => `webhook:${options.account}:${kind}:${mac}`;

    app.post(webhookPath(options.account), async (req, reply) => {
      const v = verified(options, req);
      if (isRefusal(v)) return refuse(reply, v);
      const earlier = messages.get(v.mac);
      if (earlier) {
        // The same signed request again (an honest retry, or a replay): the original answer, nothing new queued.
        const answer = await earlier.catch(() => null);
        if (answer) return reply.code(200).send(answer);
      }
      const p = parsed(req, inboundMessageSchema);
      if (isRefusal(p)) return refuse(reply, p);
      const answer = options.ctx.inbox
        .accept(toInbound(options.account, p.data))
        .then((res: AcceptResult): MessageAnswer => ({ accepted: true, gate: res.gate ?? 'admitted', duplicate: res.duplicate, turnId: res.turnId }));
      messages.set(v.mac, answer, v.expiresAt);
      // Replicas: the same signed request taken by another replica is answered as it was there.
      const shared = marks ? await marks.put(markKey('m', v.mac), PENDING, v.expiresAt).catch(() => null) : null;
      const there = shared && !shared.created ? storedAnswer(shared.value) : null;
      try {
        const mine = await answer;
        if (there) return reply.code(200).send(there);
        if (shared?.created) await marks!.update(markKey('m', v.mac), JSON.stringify(mine)).catch(() => undefined);
        return reply.code(202).send(mine);
      } catch (err) {
        messages.forget(v.mac, answer);
        if (shared?.created) await marks!.forget(markKey('m', v.mac), PENDING).catch(() => undefined);
        throw err;
      }
    });

    app.post<{ Params: { id: string } }>(`${webhookPath(options.account)}/approvals/:id`, async (req, reply) => {
      const v = verified(options, req);
      if (isRefusal(v)) return refuse(reply, v);
      if (decisions.get(v.mac)) {
        return sendError(reply, 409, 'replayed', 'This signed decision was already received (a replay); sign each decision with a fresh timestamp.');
      }
      const d = parsed(req, approvalDecisionSchema);
      if (isRefusal(d)) return refuse(reply, d);
      if (!APPROVAL_ID.test(req.params.id)) return sendError(reply, 404, 'not_found', 'No such approval.');
      // Claimed before the first await, so two copies arriving together cannot both act.
      decisions.set(v.mac, true, v.expiresAt);
      // Then in the database, so a copy sent to another replica cannot act either.
      if (marks) {
        const shared = await marks.put(markKey('d', v.mac), TAKEN, v.expiresAt).catch((err: unknown) => {
          decisions.forget(v.mac, true);
          throw err;
        });
        if (!shared.created) {
          return sendError(reply, 409, 'replayed', 'This signed decision was already received (a replay); sign each decision with a fresh timestamp.');
        }
      }
      try {
        const who = await options.ctx.people.principalFor(`webhook:${d.data.senderId}`);
        if (!who) return sendError(reply, 403, 'forbidden', `Sender ${d.data.senderId} is not a known person on this gateway.`);
        const r = await options.ctx.approvals.decide(req.params.id, d.data.decision, d.data.always ?? false, { principalId: who.principalId }, d.data.mode);
        return reply.code(APPROVAL_STATUS[r.outcome]).send({ approvalId: req.params.id, ...r });
      } catch (err) {
        // Nothing was decided: the platform's retry of the same request may run.
        decisions.forget(v.mac, true);
        if (marks) await marks.forget(markKey('d', v.mac), TAKEN).catch(() => undefined);
        throw err;
      }
    });
  };
}
