import type { ChannelModule } from '@switchboard/core';
import { websocketAccountSchema } from './account.js';

/**
 * The WebSocket channel module (`channels.websocket`). Importing it (the package's `./module`
 * subpath) loads the account schema only; `ws` is imported when channels are created, and the
 * accounts share one upgrade handler.
 */
export const websocketModule: ChannelModule<'websocket', typeof websocketAccountSchema> = {
  type: 'websocket',
  accountSchema: websocketAccountSchema,
  async createChannels(accounts, deps) {
    const { createWebsocketChannels } = await import('./create-channels.js');
    return createWebsocketChannels(accounts, deps);
  },
};
