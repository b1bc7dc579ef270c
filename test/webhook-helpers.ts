import { afterAll, beforeAll } from 'vitest';
import {
  CANARY_WEBHOOK_SECRET,
  startWebhookPlatform,
  type FakeAnthropic,
  type GatewayProcess,
  type ReceivedCallback,
  type WebhookPlatform,
} from '@switchboard/testkit';
import { useGateway, type ConfigFragment } from './helpers.js';

/** What `useWebhookGateway` gives a test file. */
export interface WebhookEnv {
  readonly fake: FakeAnthropic;
  /** The gateway; assign the result of `env.gw.restart()` back to it after a restart. */
  gw: GatewayProcess;
  /** The fake platform of the `main` account. */
  readonly platform: WebhookPlatform;
  /** The fake platform of each account, by account id. */
  readonly platforms: Readonly<Record<string, WebhookPlatform>>;
}

/** A webhook account's config: the canary signing secret and `platform`'s callback URL, then `extra`. */
export function webhookAccount(platform: WebhookPlatform, extra: ConfigFragment = {}): ConfigFragment {
  return { secret: CANARY_WEBHOOK_SECRET, callbackUrl: platform.callbackUrl, ...extra };
}

/**
 * Registers the hooks for a webhook e2e file: `beforeAll` starts one fake platform per account id
 * in `accounts`, then (through `useGateway`) the fake model and a gateway whose
 * `channels.webhook.accounts` are `webhookAccount(platform, settings)` for each; `config` adds
 * other top-level settings. `afterAll` stops the gateways and the fake model, then the platforms.
 *
 *     const env = useWebhookGateway({ main: { dmPolicy: 'pairing' } });
 */
export function useWebhookGateway(accounts: Record<string, ConfigFragment>, config: ConfigFragment = {}): WebhookEnv {
  const platforms: Record<string, WebhookPlatform> = {};
  beforeAll(async () => {
    for (const account of Object.keys(accounts)) platforms[account] = await startWebhookPlatform({ account });
  });
  afterAll(async () => {
    for (const platform of Object.values(platforms)) await platform.close();
  });
  const env = useGateway({
    config: () => ({
      ...config,
      channels: { webhook: { accounts: Object.fromEntries(Object.entries(accounts).map(([id, extra]) => [id, webhookAccount(platforms[id]!, extra)])) } },
    }),
  });
  return {
    get fake() {
      return env.fake;
    },
    get gw() {
      return env.gw;
    },
    set gw(next: GatewayProcess) {
      env.gw = next;
    },
    get platform() {
      const main = platforms.main;
      if (!main) throw new Error('no "main" webhook platform: not started yet, or no such account');
      return main;
    },
    platforms,
  };
}

/** Matches the reply callback to the message with id `id`. */
export const replyTo = (id: string) => (c: ReceivedCallback) => c.body.type === 'reply' && c.body.replyTo === id;
