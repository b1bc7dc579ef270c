import type { ChannelModule } from '@switchboard/core';
import { webhookAccountSchema } from './account.js';

/**
 * The webhook channel module (`channels.webhook`). Importing it (the package's `./module`
 * subpath) loads the account schema only; the channel is imported when channels are created.
 */
export const webhookModule: ChannelModule<'webhook', typeof webhookAccountSchema> = {
  type: 'webhook',
  accountSchema: webhookAccountSchema,
  async createChannels(accounts, deps) {
    const { createWebhookChannels } = await import('./create-channels.js');
    return createWebhookChannels(accounts, deps);
  },
};
