import type { ChannelFactory } from '@switchboard/core';
import type { OpenaiAccountConfig } from './account.js';
import { OpenaiChannel } from './openai-channel.js';

/** One {@link OpenaiChannel} per configured account. */
export const createOpenaiChannels: ChannelFactory<OpenaiAccountConfig> = async (accounts) =>
  Object.entries(accounts).map(
    ([account, a]) =>
      new OpenaiChannel({
        account,
        approvalWaitMs: a.approvalWait,
        pingIntervalMs: a.pingInterval,
        dedupeWindowMs: a.dedupeWindow,
        maxBodyBytes: a.maxBodyBytes,
        required: a.required,
      }),
  );
