import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CANARY_ANTHROPIC_KEY, runCli } from '@switchboard/testkit';

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-config-'));
  const file = join(dir, 'switchboard.json5');
  writeFileSync(file, text);
  return file;
}

async function start(text: string, env: Record<string, string> = {}) {
  return runCli(['start'], { configPath: configFile(text), env, timeoutMs: 20_000 });
}

describe('invalid config', () => {
  it('exits 78 naming an unknown key, without echoing the secret', async () => {
    const r = await start(`{ gateway: { port: 0, colour: "blue" }, model: { apiKey: "${CANARY_ANTHROPIC_KEY}" } }`);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('gateway.colour');
    expect(r.stderr + r.stdout).not.toContain(CANARY_ANTHROPIC_KEY);
  });

  it('exits 78 naming a mentionPatterns entry that needs backtracking, and a pattern limit out of range', async () => {
    const tg = (pattern: string) =>
      `{ gateway: { port: 0 }, channels: { telegram: { accounts: { main: { token: "123:abc", mentionPatterns: [${JSON.stringify(pattern)}] } } } } }`;
    const back = await start(tg('(hey)\\s+\\1'));
    expect(back.code).toBe(78);
    expect(back.stderr).toMatch(/channels\.telegram\.accounts\.main\.mentionPatterns\.0: backreferences/);
    const look = await start(tg('^(?!no)bot'));
    expect(look.code).toBe(78);
    expect(look.stderr).toMatch(/mentionPatterns\.0: lookahead/);
    const limit = await start(`{ gateway: { port: 0 }, limits: { regexMaxLength: 1, regexDeadline: "1ms" } }`);
    expect(limit.code).toBe(78);
    expect(limit.stderr).toContain('limits.regexMaxLength');
    expect(limit.stderr).toContain('limits.regexDeadline');
  });

  it('exits 78 naming a bad port', async () => {
    const r = await start(`{ gateway: { port: 70000 }, model: { apiKey: "${CANARY_ANTHROPIC_KEY}" } }`);
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/gateway\.port: .*65535/);
    const s = await start(`{ gateway: { port: "http" } }`);
    expect(s.code).toBe(78);
    expect(s.stderr).toContain('gateway.port');
  });

  it('exits 78 when a secret-bearing value is the wrong type, without echoing it', async () => {
    const r = await start(`{ gateway: { port: 0 }, model: { apiKey: "${CANARY_ANTHROPIC_KEY}", baseUrl: "${CANARY_ANTHROPIC_KEY}" } }`);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('model.baseUrl');
    expect(r.stderr + r.stdout).not.toContain(CANARY_ANTHROPIC_KEY);
  });

  it('exits 78 for a missing environment variable, a bad duration and malformed JSON5', async () => {
    const env = await start(`{ model: { apiKey: "\${SWB_TEST_UNSET_VARIABLE}" } }`);
    expect(env.code).toBe(78);
    expect(env.stderr).toContain('SWB_TEST_UNSET_VARIABLE');
    const dur = await start(`{ limits: { toolTimeout: "soon" } }`);
    expect(dur.code).toBe(78);
    expect(dur.stderr).toContain('limits.toolTimeout');
    const bad = await start(`{ gateway: `);
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('JSON5');
    const port = await start(`{}`, { SWITCHBOARD_PORT: 'eighty' });
    expect(port.code).toBe(78);
    expect(port.stderr).toContain('SWITCHBOARD_PORT');
  });
});
