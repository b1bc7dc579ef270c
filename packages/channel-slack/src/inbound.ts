import { escapeRegExp } from '@switchboard/agent';
import type { InboundMessage } from '@switchboard/core';
import { z } from 'zod';
import { describeSlackFiles } from './files.js';

/** Who this app is in its workspace (from `auth.test`). */
export interface SlackSelf {
  teamId: string;
  botUserId: string;
  botId: string;
}

/** A string field of an event: Slack's ids, timestamps and text are strings when present. */
const field = (max: number) => z.string().max(max).optional();

/**
 * The fields of a Slack `message` / `app_mention` event the adapter reads; others pass through
 * unread. An event whose fields have other types is dropped before anything reads them.
 */
export const slackMessageEventSchema = z.looseObject({
  type: field(64),
  subtype: field(64),
  channel: field(64),
  channel_type: field(32),
  user: field(64),
  user_team: field(64),
  team: field(64),
  bot_id: field(64),
  text: field(200_000),
  ts: field(32),
  thread_ts: field(32),
});

/** A Slack message or app_mention event, as far as the adapter reads it. */
export type SlackMessageEvent = z.output<typeof slackMessageEventSchema>;

/** The event of an `event_callback` envelope, or why it cannot be read (wrong types, not an object). */
export function parseMessageEvent(event: unknown): { event: SlackMessageEvent } | { drop: string } {
  let r: ReturnType<typeof slackMessageEventSchema.safeParse>;
  try {
    r = slackMessageEventSchema.safeParse(event ?? {});
  } catch {
    return { drop: 'malformed event (unreadable)' };
  }
  if (r.success) return { event: r.data };
  const issue = r.error.issues[0];
  return { drop: `malformed event (${issue ? `${issue.path.join('.') || 'event'}: ${issue.message}` : 'invalid'})` };
}

/** Message subtypes that carry something a person said; the rest (edits, joins, deletions…) are ignored. */
const PERSON_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share', 'me_message']);

/** Slack markup → plain text for the model: our own mention removed, links and entities spelled out. */
export function slackToPlain(text: string, botUserId: string | null): string {
  let s = text;
  if (botUserId) s = s.replace(new RegExp(`<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>\\s*`, 'g'), '');
  s = s
    .replace(/<@([A-Z0-9]+)\|([^>]+)>/g, '@$2')
    .replace(/<@([A-Z0-9]+)>/g, '@$1')
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, (_m, id: string, name: string) => `#${name || id}`)
    .replace(/<!([a-z]+)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<([^>|\s]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<([^>\s]+)>/g, '$1');
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
}

/** The outcome of mapping one event: a message for the inbox, or why it was dropped. */
export type Mapped = { message: InboundMessage } | { drop: string };

/**
 * Maps a Slack `message` / `app_mention` event to an InboundMessage (DESIGN.md §4). The dedupe key
 * `team:channel:ts` folds Slack's retries and the app_mention + message double delivery into one.
 * Bot messages (ours and other bots') are dropped here, before they reach the inbox or a model.
 * In rooms the reply thread is the message's thread, or the message itself for a top-level
 * mention, so a thread is one conversation with one session.
 */
export function mapMessageEvent(ev: SlackMessageEvent, envelopeTeam: string, account: string, self: SlackSelf | null, now = new Date()): Mapped {
  if (ev.type !== 'message' && ev.type !== 'app_mention') return { drop: `event type ${String(ev.type)}` };
  if (!PERSON_SUBTYPES.has(ev.subtype)) return { drop: `message subtype ${String(ev.subtype)}` };
  if (!ev.channel || !ev.ts) return { drop: 'no channel or ts' };
  const isBot = Boolean(ev.bot_id) || ev.subtype === 'bot_message' || (self !== null && ev.user === self.botUserId);
  if (isBot) return { drop: 'bot message' };
  if (!ev.user) return { drop: 'no user' };
  const team = envelopeTeam || self?.teamId || ev.team || '';
  const senderTeam = ev.user_team ?? ev.team ?? team;
  const isDm = ev.channel_type === 'im' || (ev.channel_type === undefined && ev.type === 'message' && ev.channel.startsWith('D'));
  const kind = isDm ? 'dm' : 'room';
  const raw = ev.text ?? '';
  const mentioned = isDm || ev.type === 'app_mention' || (self !== null && new RegExp(`<@${escapeRegExp(self.botUserId)}(?:\\|[^>]*)?>`).test(raw));
  const text = slackToPlain(raw, self?.botUserId ?? null);
  if (text === '' && describeSlackFiles(ev).length === 0) return { drop: 'no text' };
  const thread = isDm ? ev.thread_ts : (ev.thread_ts ?? ev.ts);
  const conversation = { channel: 'slack', account, id: ev.channel, kind, ...(thread ? { thread } : {}) } as const;
  return {
    message: {
      dedupeKey: `${team}:${ev.channel}:${ev.ts}`,
      channel: 'slack',
      account,
      conversation,
      sender: { identity: `slack:${senderTeam}:${ev.user}`, isBot: false },
      kind,
      mentioned,
      text,
      platformId: ev.ts,
      receivedAt: now,
    },
  };
}
