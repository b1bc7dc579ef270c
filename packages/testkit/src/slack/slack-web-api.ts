import type { SlackEphemeral, SlackIdentity, SlackStoredMessage } from './fake-slack-types.js';
import { slackTs } from './slack-events.js';

/** Slack's limit on `text` for `chat.postMessage` / `chat.update` (longer → `msg_too_long`). */
export const SLACK_MAX_TEXT = 40_000;

const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);
const BOOL_FIELDS = new Set(['unfurl_links', 'unfurl_media', 'mrkdwn', 'reply_broadcast', 'as_user', 'link_names', 'include_locale', 'include_num_members']);

/** Decodes form-field strings the SDK produced: JSON fields parsed, boolean flags as booleans. */
export function normalizeSlackParams(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'token') continue;
    if (typeof v === 'string' && JSON_FIELDS.has(k)) {
      try {
        out[k] = JSON.parse(v);
      } catch {
        out[k] = v;
      }
    } else if (typeof v === 'string' && BOOL_FIELDS.has(k) && (v === 'true' || v === 'false' || v === '1' || v === '0')) {
      out[k] = v === 'true' || v === '1';
    } else {
      out[k] = v;
    }
  }
  return out;
}

type Body = Record<string, unknown>;
const fail = (error: string, extra: Body = {}): Body => ({ ok: false, error, ...extra });
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const CHANNEL_RE = /^[CDG][A-Z0-9]{2,}$/;
const USER_RE = /^[UW][A-Z0-9]{2,}$/;

/** The Web API methods' state and logic (messages, ephemerals, reactions); the HTTP layer is in `fake-slack.ts`. */
export class SlackWebApiState {
  readonly ephemerals: SlackEphemeral[] = [];
  readonly reactions: Array<{ channel: string; timestamp: string; name: string }> = [];
  private readonly byChannel = new Map<string, SlackStoredMessage[]>();
  private tsSeq = 0;

  constructor(private readonly id: SlackIdentity) {}

  /** Stored bot messages, current state. */
  messages(channel?: string, includeDeleted = false): SlackStoredMessage[] {
    const all = channel === undefined ? [...this.byChannel.values()].flat() : (this.byChannel.get(channel) ?? []);
    return all.filter((m) => includeDeleted || !m.deleted).map((m) => ({ ...m, history: [...m.history] }));
  }

  /** The bot-token methods; `undefined` for an unknown method. */
  handle(method: string, p: Body): Body | undefined {
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://switchboard-test.slack.com/',
          team: this.id.teamName,
          user: 'switchboard',
          team_id: this.id.teamId,
          user_id: this.id.botUserId,
          bot_id: this.id.botId,
          is_enterprise_install: false,
        };
      case 'chat.postMessage':
        return this.postMessage(p);
      case 'chat.update':
        return this.update(p);
      case 'chat.delete': {
        const m = this.find(p);
        if (!m) return fail(str(p.channel) && CHANNEL_RE.test(str(p.channel)!) ? 'message_not_found' : 'channel_not_found');
        m.deleted = true;
        return { ok: true, channel: m.channel, ts: m.ts };
      }
      case 'chat.postEphemeral': {
        const channel = str(p.channel);
        const user = str(p.user);
        if (!channel || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
        if (!user || !USER_RE.test(user)) return fail('user_not_found');
        const bad = this.checkContent(p);
        if (bad) return bad;
        const e: SlackEphemeral = { channel, user, text: str(p.text) ?? '', message_ts: slackTs(this.tsSeq++) };
        if (p.blocks !== undefined) e.blocks = p.blocks;
        if (str(p.thread_ts)) e.thread_ts = str(p.thread_ts)!;
        this.ephemerals.push(e);
        return { ok: true, message_ts: e.message_ts };
      }
      case 'conversations.info':
        return this.conversationInfo(str(p.channel));
      case 'users.info':
        return this.userInfo(str(p.user));
      case 'reactions.add': {
        const channel = str(p.channel);
        const timestamp = str(p.timestamp);
        const name = str(p.name);
        if (!channel || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
        if (!timestamp) return fail('no_item_specified');
        if (!name) return fail('invalid_name');
        if (this.reactions.some((r) => r.channel === channel && r.timestamp === timestamp && r.name === name)) return fail('already_reacted');
        this.reactions.push({ channel, timestamp, name });
        return { ok: true };
      }
      default:
        return undefined;
    }
  }

  private checkContent(p: Body, required = true): Body | undefined {
    const text = typeof p.text === 'string' ? p.text : undefined;
    if (p.blocks !== undefined && (!Array.isArray(p.blocks) || p.blocks.length > 50)) return fail('invalid_blocks');
    if (p.attachments !== undefined && !Array.isArray(p.attachments)) return fail('invalid_attachments');
    if (required && !text && p.blocks === undefined && p.attachments === undefined) return fail('no_text');
    if (text !== undefined && text.length > SLACK_MAX_TEXT) return fail('msg_too_long');
    return undefined;
  }

  private postMessage(p: Body): Body {
    const channel = str(p.channel);
    if (!channel || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
    const bad = this.checkContent(p);
    if (bad) return bad;
    const m: SlackStoredMessage = { channel, ts: slackTs(this.tsSeq++), text: str(p.text) ?? '', edits: 0, deleted: false, history: [] };
    m.history.push(m.text);
    if (p.blocks !== undefined) m.blocks = p.blocks;
    if (p.attachments !== undefined) m.attachments = p.attachments;
    if (str(p.thread_ts)) m.thread_ts = str(p.thread_ts)!;
    if (typeof p.unfurl_links === 'boolean') m.unfurl_links = p.unfurl_links;
    if (typeof p.unfurl_media === 'boolean') m.unfurl_media = p.unfurl_media;
    const list = this.byChannel.get(channel) ?? [];
    list.push(m);
    this.byChannel.set(channel, list);
    return { ok: true, channel, ts: m.ts, message: this.wire(m) };
  }

  private update(p: Body): Body {
    const channel = str(p.channel);
    if (!channel || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
    const m = this.find(p);
    if (!m) return fail('message_not_found');
    const bad = this.checkContent(p);
    if (bad) return bad;
    if (typeof p.text === 'string') m.text = p.text;
    if (p.blocks !== undefined) m.blocks = p.blocks;
    if (p.attachments !== undefined) m.attachments = p.attachments;
    m.edits++;
    m.history.push(m.text);
    return { ok: true, channel, ts: m.ts, text: m.text, message: this.wire(m) };
  }

  private find(p: Body): SlackStoredMessage | undefined {
    const channel = str(p.channel);
    const ts = str(p.ts);
    return channel && ts ? this.byChannel.get(channel)?.find((m) => m.ts === ts && !m.deleted) : undefined;
  }

  private wire(m: SlackStoredMessage): Body {
    const msg: Body = { type: 'message', user: this.id.botUserId, bot_id: this.id.botId, app_id: this.id.appId, text: m.text, ts: m.ts, team: this.id.teamId };
    if (m.blocks !== undefined) msg.blocks = m.blocks;
    if (m.attachments !== undefined) msg.attachments = m.attachments;
    if (m.thread_ts !== undefined) msg.thread_ts = m.thread_ts;
    if (m.edits > 0) msg.edited = { user: this.id.botUserId, ts: slackTs(this.tsSeq) };
    return msg;
  }

  private conversationInfo(channel: string | undefined): Body {
    if (!channel || !CHANNEL_RE.test(channel)) return fail('channel_not_found');
    const created = 1_690_000_000;
    if (channel.startsWith('D')) {
      return { ok: true, channel: { id: channel, created, is_im: true, is_org_shared: false, user: this.id.userId, is_user_deleted: false, priority: 0 } };
    }
    const isPrivate = channel.startsWith('G');
    const name = channel === this.id.channelId ? 'general' : channel.toLowerCase();
    return {
      ok: true,
      channel: {
        id: channel,
        name,
        is_channel: !isPrivate,
        is_group: isPrivate,
        is_im: false,
        is_mpim: false,
        is_private: isPrivate,
        created,
        is_archived: false,
        is_general: channel === this.id.channelId,
        is_member: true,
        is_ext_shared: false,
        is_org_shared: false,
        context_team_id: this.id.teamId,
        topic: { value: '', creator: '', last_set: 0 },
        purpose: { value: '', creator: '', last_set: 0 },
      },
    };
  }

  private userInfo(user: string | undefined): Body {
    if (!user || !USER_RE.test(user)) return fail('user_not_found');
    const isBot = user === this.id.botUserId;
    const name = isBot ? 'switchboard' : user === this.id.userId ? 'test-user' : `user-${user.toLowerCase()}`;
    return {
      ok: true,
      user: {
        id: user,
        team_id: this.id.teamId,
        name,
        deleted: false,
        real_name: isBot ? 'Switchboard' : name,
        tz: 'Europe/Berlin',
        tz_offset: 3600,
        profile: { real_name: isBot ? 'Switchboard' : name, display_name: name, ...(isBot ? { bot_id: this.id.botId } : {}) },
        is_admin: false,
        is_owner: false,
        is_bot: isBot,
        is_app_user: false,
        updated: 1_690_000_000,
      },
    };
  }
}
