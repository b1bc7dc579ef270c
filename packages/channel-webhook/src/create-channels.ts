import { type ChannelFactory, SwbError, SwbErrorCode } from '@switchboard/core';
import type { WebhookAccount } from './account.js';
import { WebhookChannel } from './webhook-channel.js';

/** A webhook account that cannot work (checked when the gateway starts). */
export class WebhookConfigError extends SwbError {
  constructor(message: string) {
    super(SwbErrorCode.Config, message);
    this.name = 'WebhookConfigError';
  }
}

function callbackUrl(account: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new WebhookConfigError(`channels.webhook.accounts.${account}.callbackUrl: not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new WebhookConfigError(`channels.webhook.accounts.${account}.callbackUrl: must be an http or https URL`);
  }
  if (u.username || u.password) {
    throw new WebhookConfigError(`channels.webhook.accounts.${account}.callbackUrl: credentials in the URL are not allowed (callbacks are signed)`);
  }
  return u.toString();
}

/** One `WebhookChannel` per configured account. */
export const createWebhookChannels: ChannelFactory<WebhookAccount> = async (accounts, deps) =>
  Object.entries(accounts).map(
    ([account, a]) =>
      new WebhookChannel({
        account,
        secret: a.secret,
        callbackUrl: callbackUrl(account, a.callbackUrl),
        replayWindowMs: a.replayWindow,
        callbackRetries: a.callbackRetries,
        callbackRetryDelayMs: a.callbackRetryDelay,
        callbackTimeoutMs: a.callbackTimeout,
        maxBodyBytes: a.maxBodyBytes,
        required: a.required,
        log: deps.log,
        ...(deps.scrub ? { scrub: deps.scrub } : {}),
      }),
  );
