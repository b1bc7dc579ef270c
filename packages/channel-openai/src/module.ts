import type { ChannelModule } from '@switchboard/core';
import { openaiAccountSchema } from './account.js';

/**
 * The OpenAI-compatible channel module (`channels.openai`). Importing it (the package's `./module`
 * subpath) loads the account schema only; the channel is imported when channels are created.
 */
export const openaiModule: ChannelModule<'openai', typeof openaiAccountSchema> = {
  type: 'openai',
  accountSchema: openaiAccountSchema,
  async createChannels(accounts, deps) {
    const { createOpenaiChannels } = await import('./create-channels.js');
    return createOpenaiChannels(accounts, deps);
  },
};
