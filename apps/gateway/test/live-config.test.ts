import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { LiveConfig, changedKeys, isLiveKey } from '../src/live-config.js';

const base = {
  gateway: { port: 0, dataDir: '/tmp/swb-live' },
  channels: { websocket: { accounts: { main: { dmPolicy: 'open', rateLimit: { burst: 5, perMinute: 10 } } } } },
};
const parse = (over: (c: any) => void) => {
  const c = structuredClone(base) as any;
  over(c);
  return parseConfig(JSON.stringify(c), {}, '/');
};

describe('live config', () => {
  it('classifies keys', () => {
    expect(isLiveKey('channels.webhook.accounts.main.rateLimit.burst')).toBe(true);
    expect(isLiveKey('channels.webhook.accounts.main.allowFrom')).toBe(true);
    expect(isLiveKey('permissions.deny')).toBe(true);
    expect(isLiveKey('agents.default.permissions.allow')).toBe(true);
    expect(isLiveKey('agents.default.mode')).toBe(true);
    expect(isLiveKey('log.level')).toBe(true);
    expect(isLiveKey('channels.webhook.accounts.other')).toBe(false);
    expect(isLiveKey('channels.webhook.accounts.main.url')).toBe(false);
    expect(isLiveKey('gateway.port')).toBe(false);
    expect(isLiveKey('permissions.approvalTimeout')).toBe(false);
    expect(isLiveKey('agents.new')).toBe(false);
  });

  it('applies live keys into a new frozen config and keeps the running value of the rest', () => {
    const running = parse(() => {});
    const live = new LiveConfig(running);
    const seen: unknown[] = [];
    live.onChange((c) => seen.push(c));
    const next = parse((c) => {
      c.channels.websocket.accounts.main.rateLimit.burst = 1;
      c.gateway.port = 8080;
      c.log = { level: 'debug' };
    });
    expect(changedKeys(running, next).sort()).toEqual(['channels.websocket.accounts.main.rateLimit.burst', 'gateway.port', 'log.level']);
    const out = live.reload(next);
    expect(out.applied.sort()).toEqual(['channels.websocket.accounts.main.rateLimit.burst', 'log.level']);
    expect(out.needsRestart).toEqual(['gateway.port']);
    expect(live.current.channels.websocket!.accounts.main!.rateLimit.burst).toBe(1);
    expect(live.current.log.level).toBe('debug');
    expect(live.current.gateway.port).toBe(0);
    expect(Object.isFrozen(live.current.channels.websocket!.accounts.main!.rateLimit)).toBe(true);
    // The old config object is untouched.
    expect(running.channels.websocket!.accounts.main!.rateLimit.burst).toBe(5);
    expect(seen).toHaveLength(1);
    // Nothing changed: no listener call.
    expect(live.reload(next)).toEqual({ applied: [], needsRestart: ['gateway.port'] });
    expect(seen).toHaveLength(1);
  });
});
