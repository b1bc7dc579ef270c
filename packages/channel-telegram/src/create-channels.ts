import type { ChannelFactory } from '@switchboard/core';
import type { TelegramAccountConfig } from './account.js';
import { TelegramChannel } from './telegram-channel.js';

/** One {@link TelegramChannel} per configured bot account. */
export const createTelegramChannels: ChannelFactory<TelegramAccountConfig> = async (accounts, deps) =>
  Object.entries(accounts).map(([account, cfg]) => new TelegramChannel(account, cfg, deps));
