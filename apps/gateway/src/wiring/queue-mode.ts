import type { Session } from '@switchboard/core';
import type { Config } from '../config.js';

/** How a message that arrives during a turn is handled. */
export type QueueMode = 'followup' | 'steer';

/**
 * The queue mode of a session on a channel account, resolved from the config the gateway started
 * with (queue modes need a restart to change): the session's own setting, else the channel
 * account's `queueMode`, else its agent's, else `followup`. Channel ids are `<type>:<account>`.
 */
export function queueModeResolver(cfg: Readonly<Config>): (session: Session, channelId: string) => QueueMode {
  const byAccount = new Map<string, QueueMode>();
  for (const [type, section] of Object.entries(cfg.channels)) {
    if (!section) continue;
    for (const [account, fields] of Object.entries(section.accounts)) if (fields.queueMode) byAccount.set(`${type}:${account}`, fields.queueMode);
  }
  const byAgent = new Map<string, QueueMode>(Object.entries(cfg.agents).map(([id, agent]) => [id, agent.queueMode]));
  return (session, channelId) => session.settings.queueMode ?? byAccount.get(channelId) ?? byAgent.get(session.agentId) ?? 'followup';
}
