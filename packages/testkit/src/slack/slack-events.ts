import type { SlackIdentity } from './fake-slack-types.js';

/** Deterministic defaults for {@link SlackIdentity}. */
export const DEFAULT_SLACK_IDENTITY: Readonly<SlackIdentity> = Object.freeze({
  teamId: 'T0TEST0001',
  teamName: 'Switchboard Test',
  botUserId: 'U0BOT00001',
  botId: 'B0BOT00001',
  appId: 'A0TEST0001',
  userId: 'U0USER0001',
  channelId: 'C0CHAN0001',
  imChannelId: 'D0DM000001',
  verificationToken: 'fake-verification-token',
});

/** Formats Slack `ts` number `n` of a series starting at `base` seconds: `"1700000000.000100"`, `"…000101"`, … */
export function slackTs(n: number, base = 1_700_000_000): string {
  const micros = 100 + n;
  return `${base + Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

/** Common fields for the message builders. */
export interface SlackMessageInit {
  text: string;
  user?: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
}

/** Builders for inner events and interaction payloads; see {@link createSlackEventFactory}. */
export interface SlackEventFactory {
  /** Next user-message `ts` (`"1710000000.000100"`, incremented; distinct from the fake's own posts). */
  nextTs(): string;
  /** A DM: `{type:'message', channel_type:'im'}`. */
  im(init: SlackMessageInit): Record<string, unknown>;
  /** A message in a channel: `channel_type:'channel'` (`thread_ts` when `threadTs` is given). */
  channelMessage(init: SlackMessageInit & { channelType?: 'channel' | 'group' | 'mpim' }): Record<string, unknown>;
  /** A reply in a thread (`threadTs` required) of a channel or, with `channelType:'im'`, a DM. */
  threadReply(init: SlackMessageInit & { threadTs: string; channelType?: 'channel' | 'im' | 'group' }): Record<string, unknown>;
  /** `{type:'app_mention'}`; `<@BOT>` is prefixed to `text` unless it already mentions the bot. */
  appMention(init: SlackMessageInit): Record<string, unknown>;
  /** The two events one mention produces in a channel the bot is in: `[app_mention, message]`, same channel and `ts`. */
  mentionPair(init: SlackMessageInit): [Record<string, unknown>, Record<string, unknown>];
  /** Another bot's message: `subtype:'bot_message'`, `bot_id`, no `user`. */
  botMessage(init: SlackMessageInit & { botId?: string; channelType?: string }): Record<string, unknown>;
  /** The echo of this bot's own post: `user` = bot user, `bot_id` = this bot, no subtype. */
  selfMessage(init: SlackMessageInit & { channelType?: string }): Record<string, unknown>;
  /** A `block_actions` payload for a button press on message `messageTs`. */
  blockActions(init: { actionId: string; value?: string; blockId?: string; channel?: string; messageTs?: string; user?: string }): Record<string, unknown>;
  /** A slash-command payload (Socket Mode `slash_commands` envelope shape). */
  slashCommand(init: { command: string; text?: string; channel?: string; user?: string }): Record<string, unknown>;
}

function richText(text: string): unknown[] {
  return [{ type: 'rich_text', block_id: 'rt0', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }] }];
}

/** Creates builders bound to `identity`, with their own `ts` and id counters (deterministic per factory). */
export function createSlackEventFactory(identity: SlackIdentity = DEFAULT_SLACK_IDENTITY): SlackEventFactory {
  let tsSeq = 0;
  let idSeq = 0;
  const id = identity;
  const nextTs = () => slackTs(tsSeq++, 1_710_000_000);
  const userMessage = (init: SlackMessageInit, channel: string, channelType: string): Record<string, unknown> => {
    const ts = init.ts ?? nextTs();
    const ev: Record<string, unknown> = {
      type: 'message',
      client_msg_id: `cmsg-test-${++idSeq}`,
      text: init.text,
      user: init.user ?? id.userId,
      ts,
      blocks: richText(init.text),
      team: id.teamId,
      channel: init.channel ?? channel,
      event_ts: ts,
      channel_type: channelType,
    };
    if (init.threadTs !== undefined) {
      ev.thread_ts = init.threadTs;
      ev.parent_user_id = init.user ?? id.userId;
    }
    return ev;
  };
  const factory: SlackEventFactory = {
    nextTs,
    im: (init) => userMessage(init, id.imChannelId, 'im'),
    channelMessage: (init) => userMessage(init, id.channelId, init.channelType ?? 'channel'),
    threadReply: (init) => {
      const type = init.channelType ?? 'channel';
      return userMessage(init, type === 'im' ? id.imChannelId : id.channelId, type);
    },
    appMention: (init) => {
      const ts = init.ts ?? nextTs();
      const mention = `<@${id.botUserId}>`;
      const text = init.text.includes(mention) ? init.text : `${mention} ${init.text}`;
      const ev: Record<string, unknown> = {
        type: 'app_mention',
        client_msg_id: `cmsg-test-${++idSeq}`,
        text,
        user: init.user ?? id.userId,
        ts,
        blocks: richText(text),
        team: id.teamId,
        channel: init.channel ?? id.channelId,
        event_ts: ts,
      };
      if (init.threadTs !== undefined) ev.thread_ts = init.threadTs;
      return ev;
    },
    mentionPair: (init) => {
      const mention = factory.appMention(init);
      const message = factory.channelMessage({ ...init, text: mention.text as string, ts: mention.ts as string });
      message.client_msg_id = mention.client_msg_id;
      return [mention, message];
    },
    botMessage: (init) => {
      const ts = init.ts ?? nextTs();
      const ev: Record<string, unknown> = {
        type: 'message',
        subtype: 'bot_message',
        text: init.text,
        ts,
        username: 'other-bot',
        bot_id: init.botId ?? 'B0OTHER001',
        channel: init.channel ?? id.channelId,
        event_ts: ts,
        channel_type: init.channelType ?? 'channel',
      };
      if (init.threadTs !== undefined) ev.thread_ts = init.threadTs;
      return ev;
    },
    selfMessage: (init) => {
      const ts = init.ts ?? nextTs();
      const ev: Record<string, unknown> = {
        type: 'message',
        text: init.text,
        user: id.botUserId,
        bot_id: id.botId,
        app_id: id.appId,
        bot_profile: { id: id.botId, app_id: id.appId, name: 'switchboard', team_id: id.teamId },
        ts,
        team: id.teamId,
        channel: init.channel ?? id.channelId,
        event_ts: ts,
        channel_type: init.channelType ?? 'channel',
      };
      if (init.threadTs !== undefined) ev.thread_ts = init.threadTs;
      return ev;
    },
    blockActions: (init) => {
      const channel = init.channel ?? id.channelId;
      const messageTs = init.messageTs ?? slackTs(0);
      const user = init.user ?? id.userId;
      return {
        type: 'block_actions',
        user: { id: user, username: 'test-user', name: 'test-user', team_id: id.teamId },
        api_app_id: id.appId,
        token: id.verificationToken,
        container: { type: 'message', message_ts: messageTs, channel_id: channel, is_ephemeral: false },
        trigger_id: `trg-test-${++idSeq}`,
        team: { id: id.teamId, domain: 'switchboard-test' },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: channel, name: 'general' },
        message: { type: 'message', user: id.botUserId, bot_id: id.botId, ts: messageTs, text: '' },
        state: { values: {} },
        response_url: `https://hooks.slack.invalid/actions/${id.teamId}/${idSeq}/test`,
        actions: [
          {
            action_id: init.actionId,
            block_id: init.blockId ?? 'actions0',
            text: { type: 'plain_text', text: init.actionId, emoji: true },
            value: init.value ?? '',
            type: 'button',
            action_ts: nextTs(),
          },
        ],
      };
    },
    slashCommand: (init) => ({
      token: id.verificationToken,
      team_id: id.teamId,
      team_domain: 'switchboard-test',
      channel_id: init.channel ?? id.channelId,
      channel_name: 'general',
      user_id: init.user ?? id.userId,
      user_name: 'test-user',
      command: init.command,
      text: init.text ?? '',
      api_app_id: id.appId,
      is_enterprise_install: 'false',
      response_url: `https://hooks.slack.invalid/commands/${id.teamId}/${++idSeq}/test`,
      trigger_id: `trg-test-${idSeq}`,
    }),
  };
  return factory;
}

/** Wraps an inner event in the `event_callback` envelope Slack POSTs (and nests in Socket Mode `events_api`). */
export function buildEventCallback(
  identity: SlackIdentity,
  event: Record<string, unknown>,
  eventId: string,
  eventTime = Math.floor(Date.now() / 1000),
): Record<string, unknown> {
  return {
    token: identity.verificationToken,
    team_id: identity.teamId,
    context_team_id: identity.teamId,
    context_enterprise_id: null,
    api_app_id: identity.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: eventTime,
    authorizations: [{ enterprise_id: null, team_id: identity.teamId, user_id: identity.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-test-${eventId}`,
  };
}
