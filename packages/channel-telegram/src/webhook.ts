import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { updateSchema, type TgUpdate } from './update-schema.js';

/** Compares a presented secret with the configured one in constant time (hashes equalise lengths). */
export function secretMatches(presented: unknown, secret: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b) && presented.length === secret.length;
}

/** What the webhook route needs from its channel. */
export interface WebhookRouteOptions {
  path: string;
  secret: string;
  log: Logger;
  /** False until getMe has answered: updates are refused with 503 so Telegram redelivers them. */
  ready(): boolean;
  /** Durably handles the update (inbox); rejects when it could not be stored. */
  handle(update: TgUpdate): Promise<void>;
}

/**
 * The Telegram webhook route: checks `X-Telegram-Bot-Api-Secret-Token` (401 otherwise, before
 * anything else happens), validates the update, stores it and answers 200 at once — the turn runs
 * afterwards. A failure to store answers 503, so Telegram delivers the update again.
 */
export function webhookRoute(options: WebhookRouteOptions) {
  return async (app: FastifyInstance): Promise<void> => {
    app.route({
      method: 'POST',
      url: options.path,
      // Checked before the body is parsed: an unauthenticated request gets 401 whatever it carries.
      onRequest: async (req, reply) => {
        if (secretMatches(req.headers['x-telegram-bot-api-secret-token'], options.secret)) return;
        options.log.warn({ event: 'telegram_webhook_unauthorized' }, 'telegram: webhook request with a missing or wrong secret token');
        await reply.code(401).send({ code: 'unauthorized', message: 'The secret token is missing or wrong.' });
      },
      handler: async (req, reply) => {
        const parsed = updateSchema.safeParse(req.body);
        if (!parsed.success) {
          const where = parsed.error.issues
            .map((i) => `${i.path.join('.') || '(update)'}: ${i.message}`)
            .slice(0, 5)
            .join('; ');
          return reply.code(400).send({ code: 'bad_update', message: `Not a valid Telegram update: ${where}` });
        }
        if (!options.ready()) return reply.code(503).send({ code: 'starting', message: 'The bot is starting; deliver the update again shortly.' });
        try {
          await options.handle(parsed.data);
        } catch (err) {
          options.log.error(
            { event: 'telegram_webhook_store_failed', updateId: parsed.data.update_id, error: err instanceof Error ? err.message : String(err) },
            'telegram: could not store a webhook update',
          );
          return reply.code(503).send({ code: 'unavailable', message: 'The update could not be stored; deliver it again.' });
        }
        return reply.code(200).send({ ok: true });
      },
    });
  };
}
