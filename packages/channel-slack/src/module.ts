import type { ChannelModule } from '@switchboard/core';
import { slackAccountSchema } from './account.js';

/**
 * The Slack channel module (`channels.slack`). Importing it (the package's `./module` subpath)
 * loads the account schema only; the Slack SDKs are imported when channels are created, and the
 * doctor's token checks (doctor.ts) when `switchboard doctor` runs.
 */
export const slackModule: ChannelModule<'slack', typeof slackAccountSchema> = {
  type: 'slack',
  accountSchema: slackAccountSchema,
  async createChannels(accounts, deps) {
    const { createSlackChannels } = await import('./create-channels.js');
    return createSlackChannels(accounts, deps);
  },
  doctor: {
    async *checkAccounts(accounts, deps) {
      const { checkSlackAccounts } = await import('./doctor.js');
      yield* checkSlackAccounts(accounts, deps);
    },
  },
};
