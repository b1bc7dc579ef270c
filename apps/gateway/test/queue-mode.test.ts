import type { Session } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { queueModeResolver } from '../src/wiring/queue-mode.js';

const config = parseConfig(
  JSON.stringify({
    gateway: { port: 0, dataDir: '/tmp/swb-queue-mode' },
    agents: { default: {}, helper: { queueMode: 'steer' } },
    channels: {
      websocket: { accounts: { main: {}, fast: { queueMode: 'steer' } } },
      webhook: { accounts: { hook: { secret: '0123456789abcdef', callbackUrl: 'http://127.0.0.1:9/cb', queueMode: 'followup' } } },
    },
  }),
  {},
  '/',
);
const session = (agentId: string, queueMode?: 'followup' | 'steer') => ({ agentId, settings: queueMode ? { queueMode } : {} }) as Session;

describe('queue mode of a session', () => {
  const queueMode = queueModeResolver(config);

  it("the session's own setting wins over the account's and the agent's", () => {
    expect(queueMode(session('helper', 'followup'), 'websocket:fast')).toBe('followup');
    expect(queueMode(session('default', 'steer'), 'webhook:hook')).toBe('steer');
  });

  it("then the channel account's queueMode, by channel id <type>:<account>", () => {
    expect(queueMode(session('default'), 'websocket:fast')).toBe('steer');
    expect(queueMode(session('helper'), 'webhook:hook')).toBe('followup');
  });

  it("then the agent's (default followup); an unknown agent or account falls through", () => {
    expect(queueMode(session('helper'), 'websocket:main')).toBe('steer');
    expect(queueMode(session('default'), 'websocket:main')).toBe('followup');
    expect(queueMode(session('helper'), 'websocket:nope')).toBe('steer');
    expect(queueMode(session('helper'), 'fast')).toBe('steer');
    expect(queueMode(session('toString'), 'constructor:fast')).toBe('followup');
  });
});
