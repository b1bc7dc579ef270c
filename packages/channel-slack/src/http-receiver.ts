import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isSwbError, SwbErrorCode } from '@switchboard/core';
import type { Logger } from 'pino';
import { verifySlackSignature } from './signature.js';
import { messageOf } from './slack-faults.js';

/** What the HTTP receiver hands to its channel. */
export interface HttpReceiverDeps {
  account: string;
  signingSecret: string;
  log: Logger;
  /**
   * Writes an `event_callback` to the inbox. Resolves once it is durable (or dropped on purpose);
   * throws when it could not be stored, so Slack gets a 5xx and retries.
   */
  onEvent(body: Record<string, unknown>, retry: { num: number | null; reason: string | null }): Promise<void>;
  /** An interaction payload (button press…), called after the 200 went out. Must not throw. */
  onInteraction(payload: Record<string, unknown>): void;
  /** A slash command; resolves to the ephemeral answer. Must not throw. */
  onCommand(fields: Record<string, string>): Promise<string>;
}

/** The URL paths of an account's endpoints. */
export function slackPaths(account: string): { events: string; interactive: string } {
  return { events: `/channels/slack/${account}/events`, interactive: `/channels/slack/${account}/interactive` };
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * The Events API and interactivity endpoints on the gateway's Fastify (Bolt's own receivers would
 * need a second server and acknowledge before anything is stored). The body is kept raw for the
 * signature; a request is acknowledged only after its event is in the inbox.
 */
export function slackHttpRoutes(deps: HttpReceiverDeps): FastifyPluginAsync {
  const paths = slackPaths(deps.account);
  const log = deps.log.child({ receiver: 'http' });

  /** Verifies the signature; answers 401 and returns null when it fails. */
  const verified = async (req: FastifyRequest, reply: FastifyReply): Promise<Buffer | null> => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const failure = verifySlackSignature(
      deps.signingSecret,
      { timestamp: header(req, 'x-slack-request-timestamp'), signature: header(req, 'x-slack-signature') },
      raw,
    );
    if (failure === null) return raw;
    log.warn({ failure, path: req.url.split('?')[0] }, 'slack request refused');
    await reply.code(401).header('x-slack-no-retry', '1').send({ ok: false, error: 'invalid_request_signature' });
    return null;
  };

  return async (app: FastifyInstance) => {
    // Scoped to this plugin: the raw bytes are what Slack signed.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    app.post(paths.events, async (req, reply) => {
      const raw = await verified(req, reply);
      if (!raw) return reply;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        if (!body || typeof body !== 'object') throw new Error('not an object');
      } catch {
        return reply.code(400).send({ ok: false, error: 'invalid_json' });
      }
      // Only a string challenge is echoed: String() of an object with a hostile toString throws.
      if (body.type === 'url_verification') return reply.send({ challenge: typeof body.challenge === 'string' ? body.challenge : '' });
      if (body.type !== 'event_callback') return reply.send({ ok: true });
      const num = Number(header(req, 'x-slack-retry-num'));
      try {
        await deps.onEvent(body, { num: Number.isFinite(num) ? num : null, reason: header(req, 'x-slack-retry-reason') ?? null });
      } catch (err) {
        // Not stored because the gateway is stopping, its database is unreachable or the account is not identified yet: 503, Slack redelivers.
        // (isSwbError is total: a hostile thrown value reads as an internal error.)
        const notReady = isSwbError(err, SwbErrorCode.NotReady);
        const noStore = isSwbError(err, SwbErrorCode.StorageUnavailable);
        const unavailable = notReady || noStore || isSwbError(err, SwbErrorCode.ShuttingDown);
        log.error(
          { message: messageOf(err), eventId: typeof body.event_id === 'string' ? body.event_id : undefined },
          'slack event not stored; Slack will retry',
        );
        return reply
          .code(unavailable ? 503 : 500)
          .send({ ok: false, error: notReady ? 'starting' : noStore ? 'storage_unavailable' : unavailable ? 'shutting_down' : 'internal' });
      }
      return reply.send({ ok: true });
    });

    app.post(paths.interactive, async (req, reply) => {
      const rawBody = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      // Slack's certificate checks for slash commands are unsigned and carry nothing to act on.
      if (new URLSearchParams(rawBody).get('ssl_check') === '1') return reply.send('');
      const raw = await verified(req, reply);
      if (!raw) return reply;
      const form = new URLSearchParams(raw.toString('utf8'));
      const payload = form.get('payload');
      if (payload !== null) {
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(payload) as Record<string, unknown>;
        } catch {
          return reply.code(400).send({ ok: false, error: 'invalid_payload' });
        }
        // Acknowledge first (Slack allows 3 s); the press is handled right after.
        await reply.send('');
        deps.onInteraction(parsed);
        return reply;
      }
      if (form.get('command')) {
        const text = await deps.onCommand(Object.fromEntries(form.entries()));
        return reply.send({ response_type: 'ephemeral', text });
      }
      return reply.code(400).send({ ok: false, error: 'unknown_request' });
    });
  };
}
