import { type Channel, type ChannelFactory, SwbError, SwbErrorCode } from '@switchboard/core';
import { WebhookChannel } from './webhook-channel.js';

/** One webhook account as the gateway's validated config gives it (durations in milliseconds). */
export interface WebhookAccount {
  secret: string;
  callbackUrl: string;
  replayWindow: number;
  callbackRetries?: number;
  callbackRetryDelay?: number;
  callbackTimeout?: number;
  maxBodyBytes?: number;
  required?: boolean;
}

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

/** The webhook package's channel factory: one `WebhookChannel` per configured account. */
export const createChannels: ChannelFactory<WebhookAccount> = (accounts, deps): Channel[] =>
  Object.entries(accounts).map(
    ([account, a]) =>
      new WebhookChannel({
        account,
        secret: a.secret,
        callbackUrl: callbackUrl(account, a.callbackUrl),
        replayWindowMs: a.replayWindow,
        callbackRetries: a.callbackRetries ?? 3,
        callbackRetryDelayMs: a.callbackRetryDelay ?? 1_000,
        callbackTimeoutMs: a.callbackTimeout ?? 10_000,
        maxBodyBytes: a.maxBodyBytes ?? 256 * 1024,
        required: a.required ?? false,
        log: deps.log,
      }),
  );
