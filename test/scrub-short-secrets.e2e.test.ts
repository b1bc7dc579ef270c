import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CANARY_ANTHROPIC_KEY, runCli } from '@switchboard/testkit';

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-scrub-'));
  const file = join(dir, 'switchboard.json5');
  writeFileSync(file, text);
  return file;
}

describe('scrubbing only scrubs secrets', () => {
  it('a one-character secret does not mangle the config error ("e[redacted]pected string")', async () => {
    const r = await runCli(['start'], { configPath: configFile(`{ gateway: { port: "http" }, model: { apiKey: "e" } }`), timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('gateway.port: Invalid input: expected number, received string');
    expect(r.stderr).not.toContain('[redacted]');
  });

  it('a real secret in a wrong-typed value is still never echoed', async () => {
    const r = await runCli(['start'], {
      configPath: configFile(`{ gateway: { port: 0 }, model: { apiKey: "${CANARY_ANTHROPIC_KEY}", baseUrl: "${CANARY_ANTHROPIC_KEY}" } }`),
      timeoutMs: 20_000,
    });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('model.baseUrl');
    expect(r.stderr + r.stdout).not.toContain(CANARY_ANTHROPIC_KEY);
  });

  it('platform tokens shorter than their format allows are refused, naming the key', async () => {
    const r = await runCli(['start'], {
      configPath: configFile(
        `{ gateway: { port: 0 }, channels: { telegram: { accounts: { main: { token: "12:x" } } }, slack: { accounts: { main: { botToken: "xoxb-1", signingSecret: "abc" } } } } }`,
      ),
      timeoutMs: 20_000,
    });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('channels.telegram.accounts.main.token');
    expect(r.stderr).toContain('channels.slack.accounts.main.botToken');
    expect(r.stderr).toContain('channels.slack.accounts.main.signingSecret');
    expect(r.stderr).not.toContain('[redacted]');
  });
});
