import type { ChannelFactory } from '@switchboard/core';
import type { WebsocketAccountConfig } from './account.js';
import { WebsocketUpgrades } from './upgrades.js';
import { WebsocketChannel } from './websocket-channel.js';

/**
 * One {@link WebsocketChannel} per configured account, all behind one {@link WebsocketUpgrades}:
 * the HTTP server's `upgrade` event gets a single listener for the whole channel, which routes
 * each upgrade to its account by path.
 */
export const createWebsocketChannels: ChannelFactory<WebsocketAccountConfig> = async (accounts) => {
  const upgrades = new WebsocketUpgrades();
  return Object.entries(accounts).map(
    ([account, a]) =>
      new WebsocketChannel({
        account,
        allowedOrigins: a.allowedOrigins,
        helloTimeoutMs: a.helloTimeout,
        maxPayload: a.maxPayload,
        maxUnauthenticatedPerAddress: a.maxUnauthenticatedPerAddress,
        maxUnauthenticated: a.maxUnauthenticated,
        required: a.required,
        upgrades,
      }),
  );
};
