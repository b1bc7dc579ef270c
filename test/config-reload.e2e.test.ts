import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { api, deepMerge } from '@switchboard/testkit';
import { useWebhookGateway } from './webhook-helpers.js';

// Issue 11, acceptance 8: SIGHUP reloads the config file; live keys apply at once, the rest are
// named as needing a restart, and an invalid file leaves the running config in force.
const env = useWebhookGateway({ main: { dmPolicy: 'open', allowFrom: ['*'], rateLimit: { burst: 50, perMinute: 600 } } });

const gates = async (sender: string, n: number): Promise<string[]> => {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await env.platform.send(env.gw, env.platform.dm(sender, `message ${i}`));
    expect(res.status).toBe(202);
    out.push(res.json.gate as string);
  }
  return out;
};

describe('SIGHUP config reload (issue 11, acceptance 8)', () => {
  it('applies a lowered rate limit live, names keys that need a restart, and refuses an invalid file', async () => {
    const { gw } = env;
    expect(await gates('alice', 3)).toEqual(['admitted', 'admitted', 'admitted']);

    const lowered = deepMerge(gw.config, {
      channels: { webhook: { accounts: { main: { rateLimit: { burst: 1, perMinute: 0.1 } } } } },
      limits: { shutdownGrace: '3s' },
    });
    writeFileSync(gw.configPath, JSON.stringify(lowered));
    gw.child.kill('SIGHUP');
    const reloaded = JSON.parse(await gw.waitForLog((l) => l.includes('"config_reloaded"')));
    expect(reloaded.applied).toContain('channels.webhook.accounts.main.rateLimit.burst');
    expect(reloaded.needsRestart).toEqual(['limits.shutdownGrace']);
    const restartLine = await gw.waitForLog((l) => l.includes('"config_needs_restart"'));
    expect(restartLine).toContain('limits.shutdownGrace');

    // Burst 1: a new sender gets one message; a sender with tokens left under the old limit keeps
    // at most the new burst (one); everything past that is refused.
    expect(await gates('bob', 3)).toEqual(['admitted', 'rate_limited', 'rate_limited']);
    expect(await gates('alice', 3)).toEqual(['admitted', 'rate_limited', 'rate_limited']);

    writeFileSync(gw.configPath, '{ gateway: ');
    gw.child.kill('SIGHUP');
    const refused = JSON.parse(await gw.waitForLog((l) => l.includes('"config_reload_refused"')));
    expect(refused.level).toBe(50);
    expect(refused.msg).toContain('JSON5');
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    // The running (reloaded) config stays in force.
    expect(await gates('carol', 2)).toEqual(['admitted', 'rate_limited']);
    expect(gw.child.exitCode).toBeNull();
  });
});
