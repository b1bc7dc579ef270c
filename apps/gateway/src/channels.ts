import type { Channel, ChannelModule } from '@switchboard/core';
import type { Logger } from 'pino';
import { configSecrets, configVariables, type Config } from './config.js';
import { scrubber } from './logger.js';
import { CHANNEL_MODULES } from './config-channels.js';

/**
 * Creates the channels of every configured account, module by module (CHANNEL_MODULES order).
 * A module whose type has no account is never asked, so its implementation is never imported.
 */
export async function loadChannels(cfg: Readonly<Config>, log: Logger): Promise<Channel[]> {
  const sections = new Map(Object.entries(cfg.channels));
  const vars = configVariables(cfg);
  const scrub = scrubber(configSecrets(cfg));
  const modules: readonly ChannelModule[] = CHANNEL_MODULES;
  const out: Channel[] = [];
  for (const module of modules) {
    const accounts = sections.get(module.type)?.accounts;
    if (!accounts || Object.keys(accounts).length === 0) continue;
    const configSource = (account: string, path: readonly string[]) => {
      const key = ['channels', module.type, 'accounts', account, ...path].join('.');
      return { key, variables: vars.get(key) ?? [] };
    };
    out.push(...(await module.createChannels(accounts, { dataDir: cfg.gateway.dataDir, log: log.child({ channelType: module.type }), configSource, scrub })));
  }
  return out;
}
