import type { ChannelFactory } from '@switchboard/core';
import type { SlackAccountConfig } from './account.js';
import { SlackChannel } from './slack-channel.js';

/** One {@link SlackChannel} per configured workspace app account. */
export const createSlackChannels: ChannelFactory<SlackAccountConfig> = async (accounts, deps) =>
  Object.entries(accounts).map(([account, cfg]) => new SlackChannel(account, cfg, deps));
