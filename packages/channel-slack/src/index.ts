import type { Channel, ChannelFactory } from '@switchboard/core';
import type { SlackAccountConfig } from './account.js';
import { SlackChannel } from './slack-channel.js';

export type { SlackAccountConfig } from './account.js';
export { SlackChannel } from './slack-channel.js';
export { slackPaths } from './http-receiver.js';
export { verifySlackSignature, SLACK_TIMESTAMP_WINDOW_SEC } from './signature.js';
export { mapMessageEvent, slackToPlain } from './inbound.js';
export { toMrkdwn, chunkMrkdwn, escapeMrkdwn, SLACK_CHUNK_LIMIT } from './mrkdwn.js';

/** The gateway's entry point: one {@link SlackChannel} per configured workspace app account. */
export const createChannels: ChannelFactory<SlackAccountConfig> = (accounts, deps): Channel[] =>
  Object.entries(accounts).map(([account, cfg]) => new SlackChannel(account, cfg, deps));
