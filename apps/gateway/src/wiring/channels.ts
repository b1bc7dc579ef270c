import type { Channel, Storage } from '@switchboard/core';
import type { Logger } from 'pino';
import { type ChannelContextDeps, channelContext } from '../channel-context.js';
import { loadChannels } from '../channels.js';
import type { Config } from '../config.js';
import type { Domain } from './domain.js';
import type { HttpPlane } from './http.js';

/** The configured channel accounts, in start-up order, and the same channels by id (`<type>:<account>`). */
export interface OpenedChannels {
  list: Channel[];
  byId: ReadonlyMap<string, Channel>;
}

/**
 * Start-up step: creates a channel per configured account (nothing is started yet). Warns when
 * there is none, since then nobody can chat.
 */
export async function openChannels(cfg: Readonly<Config>, log: Logger): Promise<OpenedChannels> {
  const list = await loadChannels(cfg, log);
  if (list.length === 0) {
    log.warn(
      { event: 'no_chat_channel' },
      'no channel is configured, so nobody can chat (/ws answers 404): add an account under channels.websocket.accounts (or channels.telegram, channels.slack, channels.webhook, channels.openai)',
    );
  }
  return { list, byId: new Map(list.map((channel) => [channel.id, channel])) };
}

/** What the channels' contexts are built over. */
export interface ChannelStartInputs {
  cfg: Readonly<Config>;
  log: Logger;
  storage: Storage;
  channels: OpenedChannels;
  domain: Domain;
  http: HttpPlane;
  /** False once the gateway is shutting down. */
  accepting(): boolean;
  /** Replicas on PostgreSQL (see replica-fanout.ts). */
  replicas?: ChannelContextDeps['replicas'];
  /** `leased` among replicas (PostgreSQL): exclusive receivers wait for their lease (wiring/replicas.ts). */
  receiving: 'direct' | 'leased';
}

/** Start-up step: starts each channel, one after the other, with its context bound to it (before the listen). */
export async function startChannels(inputs: ChannelStartInputs): Promise<void> {
  const { domain, http } = inputs;
  const ids = Object.keys(inputs.cfg.agents);
  const defaultAgent = ids.includes('default') ? 'default' : ids[0]!;
  const deps: ChannelContextDeps = {
    agents: [defaultAgent, ...ids.filter((id) => id !== defaultAgent)],
    storage: inputs.storage,
    engine: domain.engine,
    broker: domain.broker,
    policy: domain.policy,
    log: inputs.log,
    accept: (message) => domain.router.accept(message),
    sessionKey: (conversation, principalId) => domain.router.sessionKey(conversation, principalId),
    queueMode: domain.queueMode,
    budgets: domain.budgets,
    modelName: inputs.cfg.model.name,
    limiter: http.limiter,
    clientAddress: http.clientAddress,
    access: http.access,
    tokenExpiry: http.tokenExpiry,
    accepting: inputs.accepting,
    receiving: inputs.receiving,
    inboxMaxAttempts: inputs.cfg.limits.inboxMaxAttempts,
    files: http.files,
    ...(http.console ? { console: http.console } : {}),
    ...(inputs.replicas ? { replicas: inputs.replicas } : {}),
  };
  for (const channel of inputs.channels.list) await channel.start(channelContext(deps, channel, http.app));
}
