import type { Channel, ChannelFactory } from '@switchboard/core';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { envSourceOf } from './config-sources.js';

/** The package that implements each configurable channel type. */
const ADAPTERS: Record<string, string> = {
  telegram: '@switchboard/channel-telegram',
  slack: '@switchboard/channel-slack',
  webhook: '@switchboard/channel-webhook',
};

/** Imports an adapter package by name and checks it exports a channel factory. */
async function loadFactory(type: string): Promise<ChannelFactory> {
  const pkg = ADAPTERS[type]!;
  const mod = (await import(pkg)) as { createChannels?: ChannelFactory };
  if (typeof mod.createChannels !== 'function') throw new Error(`${pkg} does not export createChannels`);
  return mod.createChannels;
}

/** Loads the adapters of configured channels only, with import() so unused ones cost nothing. */
export async function loadChannels(cfg: Readonly<Config>, log: Logger): Promise<Channel[]> {
  const out: Channel[] = [];
  const ws = cfg.channels.websocket;
  if (ws && Object.keys(ws.accounts).length > 0) {
    const { WebsocketChannel, WebsocketUpgrades } = await import('@switchboard/channel-websocket');
    // One upgrade handler for every account of the channel.
    const upgrades = new WebsocketUpgrades();
    for (const [account, a] of Object.entries(ws.accounts)) {
      out.push(
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
    }
  }
  for (const type of Object.keys(ADAPTERS)) {
    const section = (cfg.channels as Record<string, { accounts: Record<string, unknown> } | undefined>)[type];
    if (!section || Object.keys(section.accounts).length === 0) continue;
    const create = await loadFactory(type);
    out.push(...create(section.accounts, { dataDir: cfg.gateway.dataDir, log: log.child({ channelType: type }), secretSource: (path) => envSourceOf(cfg, path) }));
  }
  return out;
}
