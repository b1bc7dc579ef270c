import type { AcceptResult, ChannelContext, ConversationRef } from '@switchboard/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { answerError, completionBody, turnIdOf } from './answers.js';
import { IDEMPOTENCY_HEADER, readIdempotencyKey, readSessionLabel, type RequestKeys, SESSION_HEADER } from './headers.js';
import { answerOf, type Answer, type LiveTurns } from './live-turns.js';
import { SseAnswer } from './sse.js';
import { acceptError, authenticate, type Caller, gateError, modelNotFound, parseJson, send, unauthorized } from './http-answers.js';
import { parseChatRequest } from './wire.js';

/** The URL prefix of an account's API: `/v1` for `default`, `/channels/openai/<id>/v1` otherwise. */
export function openaiPrefix(account: string): string {
  return account === 'default' ? '/v1' : `/channels/openai/${account}/v1`;
}

/** An open request a token or principal change may cut. */
export interface OpenRequest {
  caller: Caller;
  cut(reason: string): void;
}

/** What the routes need from their channel. */
export interface OpenaiRouteOptions {
  account: string;
  ctx: ChannelContext;
  live: LiveTurns;
  keys: RequestKeys;
  maxBodyBytes: number;
  pingIntervalMs: number;
  /** False once the channel stops. */
  open(): boolean;
  /** Tracks an open request until `done`; returns `done`. */
  track(req: OpenRequest): () => void;
}

/**
 * The account's routes. The plugin is encapsulated: its raw-body parser (with the account's
 * `maxBodyBytes`) and its OpenAI-style error handler apply to these routes only.
 */
export function openaiRoutes(o: OpenaiRouteOptions): FastifyPluginAsync {
  const prefix = openaiPrefix(o.account);
  const agents = () => o.ctx.inbox.agents ?? ['default'];
  const conversation = (principalId: string): ConversationRef => ({ channel: 'openai', account: o.account, id: principalId, kind: 'dm' });
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: o.maxBodyBytes }, (_req, body, done) => done(null, body));
    app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
      if (err.statusCode === 413)
        return send(reply, {
          status: 413,
          type: 'invalid_request_error',
          code: 'request_too_large',
          message: `The body is larger than ${o.maxBodyBytes} bytes.`,
        });
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
        return send(reply, { status: err.statusCode, type: 'invalid_request_error', code: 'bad_request', message: err.message });
      req.log.error({ err }, 'openai request failed');
      return send(reply, {
        status: 500,
        type: 'server_error',
        code: 'internal',
        message: 'The gateway could not handle this request; retry it (the same request is answered once).',
      });
    });
    // Every route authenticates first: nothing about the gateway is shown to a caller without a client token.
    app.addHook('preHandler', async (req, reply) => {
      if (!o.open() || !o.ctx.inbox.accepting())
        return send(reply, { status: 503, type: 'server_error', code: 'shutting_down', message: 'The gateway is shutting down; retry shortly.' });
      const caller = await authenticate(o.ctx, req);
      if ('status' in caller) return send(reply, caller);
      (req as FastifyRequest & { caller?: Caller }).caller = caller;
    });
    const callerOf = (req: FastifyRequest) => (req as FastifyRequest & { caller: Caller }).caller;

    app.get(`${prefix}/models`, async () => ({
      object: 'list',
      data: agents().map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchboard' })),
    }));
    app.get<{ Params: { id: string } }>(`${prefix}/models/:id`, async (req, reply) =>
      agents().includes(req.params.id)
        ? { id: req.params.id, object: 'model', created: 0, owned_by: 'switchboard' }
        : send(reply, modelNotFound(req.params.id)),
    );

    app.get<{ Querystring: Record<string, unknown> }>(`${prefix}/chat/completions`, async (req, reply) => {
      const caller = callerOf(req);
      const limitRaw = req.query.limit;
      const limit = limitRaw === undefined ? 20 : Number(limitRaw);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
        return send(reply, {
          status: 400,
          type: 'invalid_request_error',
          code: 'invalid_value',
          param: 'limit',
          message: 'limit: expected a whole number from 1 to 100',
        });
      }
      let cursor = 0;
      if (req.query.after !== undefined) {
        const rec = typeof req.query.after === 'string' ? await recorded(caller, req.query.after) : null;
        if (!rec)
          return send(reply, {
            status: 400,
            type: 'invalid_request_error',
            code: 'invalid_value',
            param: 'after',
            message: 'after: not a completion of yours',
          });
        cursor = rec.id;
      }
      const finals = (await o.ctx.ledger.finalsSince(caller.principalId, cursor)).slice(0, limit + 1);
      const page = finals.slice(0, limit).map((r) => storedCompletion(answerOf(r), r.createdAt));
      return { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: finals.length > limit };
    });

    /** The caller's recorded final of a completion id, or null (another person's is never found). */
    async function recorded(caller: Caller, id: string) {
      const turnId = turnIdOf(id);
      if (!turnId) return null;
      const ledger = await o.ctx.ledger.begin(turnId, conversation(caller.principalId));
      const rec = ledger.finals.get(0);
      return rec && rec.channel === 'openai' && rec.account === o.account && rec.conversationId === caller.principalId ? rec : null;
    }

    function storedCompletion(a: Answer, at: Date) {
      const body = completionBody(a, agents()[0]!, Math.floor(at.getTime() / 1000));
      const err = answerError(a);
      return err ? { ...body, switchboard: { ...body.switchboard, error: { message: err.message, type: err.type, code: err.code } } } : body;
    }

    app.get<{ Params: { id: string } }>(`${prefix}/chat/completions/:id`, async (req, reply) => {
      const rec = await recorded(callerOf(req), req.params.id);
      if (!rec) return send(reply, { status: 404, type: 'invalid_request_error', code: 'not_found', message: 'No such completion of yours.' });
      return storedCompletion(answerOf(rec), rec.createdAt);
    });

    app.post(`${prefix}/chat/completions`, async (req, reply) => {
      const caller = callerOf(req);
      const json = parseJson(req);
      if (!json.ok) return send(reply, json.error);
      const parsed = parseChatRequest(json.value);
      if (!parsed.ok) return send(reply, parsed.error);
      const { agentId, text, stream, includeUsage } = parsed.request;
      if (!agents().includes(agentId)) return send(reply, modelNotFound(agentId));
      const label = readSessionLabel(req.headers[SESSION_HEADER]);
      if (!label.ok)
        return send(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_header', param: 'X-Switchboard-Session', message: label.message });
      const idem = readIdempotencyKey(req.headers[IDEMPOTENCY_HEADER]);
      if (!idem.ok) return send(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_header', param: 'Idempotency-Key', message: idem.message });
      const dedupeKey = await o.keys.sharedKeyFor({ tokenId: caller.tokenId, label: label.value, agentId, text }, idem.value, o.ctx.marks, o.account);

      // Listen before accepting: the turn may start (and end) before accept resolves.
      let settle: (a: Answer) => void = () => undefined;
      const answered = new Promise<Answer>((resolve) => {
        settle = resolve;
      });
      const buffered: Array<{ kind: 'text' | 'comment'; value: string }> = [];
      let sink: SseAnswer | null = null;
      const unlisten = o.live.listen(
        dedupeKey,
        {
          text: (d) => (sink ? sink.text(d) : buffered.push({ kind: 'text', value: d })),
          comment: (l) => (sink ? sink.comment(l) : buffered.push({ kind: 'comment', value: l })),
          end: (a) => settle(a),
        },
        caller.principalId,
      );
      // Tracked from now on: a token revoked while the request waits ends it.
      let turnId = '';
      const untrack = o.track({
        caller,
        cut: (message) => settle({ turnId, text: '', state: 'failed', reason: 'access_revoked', error: message, notices: [] }),
      });
      const stopListening = () => {
        unlisten();
        untrack();
      };
      const to = conversation(caller.principalId);
      let res: AcceptResult;
      try {
        res = await o.ctx.inbox.accept({
          dedupeKey,
          channel: 'openai',
          account: o.account,
          conversation: to,
          sender: { identity: `openai:${caller.tokenId}`, isBot: false },
          kind: 'dm',
          mentioned: true,
          text,
          platformId: dedupeKey,
          receivedAt: new Date(),
          principalId: caller.principalId,
          agentId,
          ...(label.value ? { sessionLabel: `${caller.tokenId}.${label.value}` } : {}),
        });
      } catch (err) {
        stopListening();
        const known = acceptError(err);
        if (known) return send(reply, known);
        throw err;
      }
      if (res.duplicate && res.sameText === false) {
        stopListening();
        return send(reply, {
          status: 422,
          type: 'invalid_request_error',
          code: 'idempotency_key_reused',
          param: 'Idempotency-Key',
          message: 'This Idempotency-Key was already used for a different message: use a fresh key for each new request.',
        });
      }
      if (res.gate && res.gate !== 'admitted') {
        stopListening();
        return send(reply, gateError(res.gate));
      }
      if (!res.turnId) {
        stopListening();
        throw new Error('an admitted request has no turn');
      }
      turnId = res.turnId;
      if (res.duplicate) {
        // A retry of a request whose turn already ended: its recorded answer (a running one answers through the listener).
        const ledger = await o.ctx.ledger.begin(turnId, to, {
          onReadError: (err) => o.ctx.log.error({ err, turnId }, 'openai: could not read the delivery ledger'),
        });
        const rec = ledger.finals.get(0);
        if (rec) settle({ ...answerOf(rec), agentId });
      }

      if (stream) {
        reply.hijack();
        sink = new SseAnswer(reply.raw, {
          turnId,
          model: agentId,
          includeUsage,
          pingIntervalMs: o.pingIntervalMs,
          onDone: stopListening,
        });
        for (const b of buffered.splice(0)) {
          if (b.kind === 'text') sink.text(b.value);
          else sink.comment(b.value);
        }
        const s = sink;
        void answered.then((a) =>
          a.reason === 'access_revoked' ? s.fail({ message: a.error ?? 'access revoked', type: 'invalid_request_error', code: 'invalid_api_key' }) : s.end(a),
        );
        return reply;
      }
      const onClose = () => settle({ turnId, text: '', state: 'failed', reason: 'client_gone', notices: [] });
      reply.raw.on('close', onClose);
      const a = await answered;
      reply.raw.off('close', onClose);
      stopListening();
      if (a.reason === 'access_revoked') return send(reply, unauthorized(a.error ?? 'access revoked'));
      const err = answerError(a);
      if (err) return send(reply, err);
      return completionBody({ ...a, agentId }, agentId);
    });
  };
}
