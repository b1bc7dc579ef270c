import fc from 'fast-check';
import { CANARY_SLACK_SIGNING_SECRET, CANARY_WEBHOOK_SECRET, signSlackRequest, signWebhookRequest } from '@switchboard/testkit';
import { PROTO_KEYS, hostileJson, hostileString, invalidJsonText, type JsonSchema } from './fuzz-helpers.js';
import { ACCOUNT as SLACK_ACCOUNT, USER as SLACK_USER } from './slack-helpers.js';
import { ALICE } from './telegram-helpers.js';

// Requests for the fuzz of the signed channel routes (test/fuzz-http.e2e.test.ts): correctly
// signed (webhook v2, Slack v0) or carrying the Telegram secret token, with bodies that are
// refused, hostile, or from senders no allowlist admits.

/** One HTTP request as the fuzz sends it. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Percent-encodes every byte but unreserved letters, digits, `-`, `_` and `~` (so `.` and `..` stay a segment). */
export const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) => (/[A-Za-z0-9_~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
/** Strings for the URL: hostile ones, kept under the header size limit. */
export const urlHostile = hostileString.map((s) => s.slice(0, 3_000));

const printable = (max: number): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
const senderId: JsonSchema = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^\\s:]+$' };
/** docs/channels/webhook.md, "Sending a message". */
export const WEBHOOK_MESSAGE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'sender', 'conversation', 'text'],
  properties: {
    id: printable(128),
    sender: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: senderId, name: printable(128), isBot: { type: 'boolean' } } },
    conversation: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'kind'],
      properties: { id: printable(128), kind: { type: 'string', enum: ['dm', 'room'] }, thread: printable(128) },
    },
    text: { type: 'string', minLength: 1, maxLength: 32_768 },
    mentioned: { type: 'boolean' },
  },
};
/** docs/channels/webhook.md, "Approvals". */
export const WEBHOOK_DECISION: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['decision', 'senderId'],
  properties: { decision: { type: 'string', enum: ['allow', 'deny'] }, always: { type: 'boolean' }, senderId },
};

export function webhookSigned(path: string, body: string): FuzzRequest {
  const ts = Math.floor(Date.now() / 1000);
  return {
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json',
      'x-switchboard-timestamp': String(ts),
      'x-switchboard-signature': signWebhookRequest(CANARY_WEBHOOK_SECRET, ts, 'POST', path, body),
    },
    body,
  };
}

export const webhookMessage = invalidJsonText(WEBHOOK_MESSAGE).map((b) => webhookSigned('/channels/webhook/main', b));
export const webhookDecision = fc
  .tuple(
    fc.oneof(
      fc.uuid(),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/),
      urlHostile.map((s) => s.slice(0, 200)),
      fc.constantFrom(...PROTO_KEYS),
    ),
    invalidJsonText(WEBHOOK_DECISION),
  )
  .map(([id, b]) => webhookSigned(`/channels/webhook/main/approvals/${pct(id)}`, b));

/** A Slack event envelope that can never be admitted: the sender is not on the allowlist (or not a user id at all). */
const slackEvent = fc
  .record(
    {
      type: fc.oneof({ weight: 4, arbitrary: fc.constant('event_callback') }, fc.constantFrom('url_verification', 'app_rate_limited'), hostileString),
      team_id: fc.oneof(fc.constant('T0TEAM0001'), hostileJson),
      api_app_id: fc.oneof(fc.constant('A0APP00001'), hostileJson),
      event_id: fc.oneof(fc.stringMatching(/^Ev[A-Z0-9]{8}$/), hostileJson),
      event_time: fc.oneof(fc.integer({ min: 0, max: 2e9 }), hostileJson),
      challenge: fc.oneof(fc.string(), hostileJson),
      event: fc.oneof(
        fc.record(
          {
            type: fc.oneof(fc.constantFrom('message', 'app_mention', 'reaction_added', 'member_joined_channel'), hostileString),
            subtype: fc.oneof(fc.constantFrom('bot_message', 'message_changed', 'message_deleted', 'thread_broadcast'), hostileJson),
            user: fc.oneof(
              fc.stringMatching(/^U[A-Z0-9]{9}$/).filter((u) => u !== SLACK_USER),
              hostileJson.filter((u) => u !== SLACK_USER),
            ),
            channel: fc.oneof(fc.constantFrom('D0DM000001', 'C0OTHER001'), hostileJson),
            channel_type: fc.oneof(fc.constantFrom('im', 'channel', 'group', 'mpim'), hostileJson),
            text: fc.oneof(fc.string(), hostileJson),
            ts: fc.oneof(fc.constant('1700000000.000100'), hostileJson),
            thread_ts: hostileJson,
            bot_id: hostileJson,
          },
          { requiredKeys: ['user'] },
        ),
        hostileJson,
      ),
    },
    { requiredKeys: ['type'] },
  )
  .chain((o) => fc.tuple(fc.constant(o), fc.constantFrom(...PROTO_KEYS), hostileJson, fc.boolean()))
  .map(([o, k, v, addProto]) => {
    const e = o as Record<string, unknown>;
    if (addProto) Object.defineProperty(e, k, { value: v, enumerable: true, writable: true, configurable: true });
    return JSON.stringify(e);
  });

export const slackEvents = fc
  .oneof({ weight: 4, arbitrary: slackEvent }, { weight: 1, arbitrary: invalidJsonText({ type: 'object', additionalProperties: false, properties: {} }) })
  .map((body): FuzzRequest => {
    const ts = Math.floor(Date.now() / 1000);
    return {
      method: 'POST',
      path: `/channels/slack/${SLACK_ACCOUNT}/events`,
      headers: {
        'content-type': 'application/json',
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': signSlackRequest(CANARY_SLACK_SIGNING_SECRET, ts, body),
      },
      body,
    };
  });

/** A Telegram update that can never be admitted: its sender is not Alice (the allowlist), or not a user at all. */
const telegramUpdate = fc
  .record(
    {
      update_id: fc.oneof(fc.integer({ min: 1, max: 2 ** 31 }), hostileJson),
      message: fc.oneof(
        fc.record(
          {
            message_id: fc.oneof(fc.integer({ min: 1, max: 2 ** 31 }), hostileJson),
            from: fc.oneof(
              fc.record({
                id: fc.integer({ min: 1, max: 2 ** 40 }).filter((id) => id !== ALICE.user.id),
                is_bot: fc.boolean(),
                first_name: fc.oneof(fc.string(), hostileString),
              }),
              hostileJson,
            ),
            chat: fc.oneof(
              fc.record({
                id: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
                type: fc.oneof(fc.constantFrom('private', 'group', 'supergroup', 'channel'), hostileString),
              }),
              hostileJson,
            ),
            date: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), hostileJson),
            text: fc.oneof(fc.string(), hostileString, hostileJson),
            entities: hostileJson,
          },
          { requiredKeys: [] },
        ),
        hostileJson,
      ),
      callback_query: hostileJson,
      edited_message: hostileJson,
    },
    { requiredKeys: [] },
  )
  .map((u) => JSON.stringify(u));

export const telegramUpdates = fc
  .oneof({ weight: 4, arbitrary: telegramUpdate }, { weight: 1, arbitrary: invalidJsonText({ type: 'object', additionalProperties: false, properties: {} }) })
  .map(
    (body): FuzzRequest => ({
      method: 'POST',
      path: '/channels/telegram/main/webhook',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': CANARY_WEBHOOK_SECRET },
      body,
    }),
  );
