import type { ChannelModule } from '@switchboard/core';
import { telegramAccountSchema } from './account.js';

/**
 * The Telegram channel module (`channels.telegram`). Importing it (the package's `./module`
 * subpath) loads the account schema only; grammY is imported when channels are created, and the
 * doctor's `getMe` check (doctor.ts) when `switchboard doctor` runs.
 */
export const telegramModule: ChannelModule<'telegram', typeof telegramAccountSchema> = {
  type: 'telegram',
  accountSchema: telegramAccountSchema,
  async createChannels(accounts, deps) {
    const { createTelegramChannels } = await import('./create-channels.js');
    return createTelegramChannels(accounts, deps);
  },
  doctor: {
    async *checkAccounts(accounts, deps) {
      const { checkTelegramAccounts } = await import('./doctor.js');
      yield* checkTelegramAccounts(accounts, deps);
    },
  },
};
