import type { Channel } from '@switchboard/core';
import type { Config } from './config.js';

/** Loads the adapters of configured channels only, with import() so unused ones cost nothing. */
export async function loadChannels(cfg: Readonly<Config>): Promise<Channel[]> {
  const out: Channel[] = [];
  const ws = cfg.channels.websocket;
  if (ws && Object.keys(ws.accounts).length > 0) {
    const { WebsocketChannel } = await import('@switchboard/channel-websocket');
    for (const [account, a] of Object.entries(ws.accounts)) {
      out.push(
        new WebsocketChannel({
          account,
          allowedOrigins: a.allowedOrigins,
          helloTimeoutMs: a.helloTimeout,
          maxPayload: a.maxPayload,
          required: a.required,
        }),
      );
    }
  }
  return out;
}
