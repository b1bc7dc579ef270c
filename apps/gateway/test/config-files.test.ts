import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const read = (f: string) => readFileSync(join(root, 'config', f), 'utf8');

describe('the shipped config files', () => {
  it('the default config parses with no environment at all', () => {
    const cfg = parseConfig(read('switchboard.json5'), {}, '/srv');
    expect(cfg.gateway).toMatchObject({ host: '127.0.0.1', port: 7420, dataDir: '/srv/data' });
    expect(cfg.model.apiKey).toBe('');
    expect(Object.keys(cfg.channels.websocket?.accounts ?? {})).toEqual(['default']);
  });

  it('the full example parses once its variables are set, and names them when they are not', () => {
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-example-000000',
      TELEGRAM_BOT_TOKEN: '123456:example-token-000000000000',
      SLACK_BOT_TOKEN: 'xoxb-example-0000000000000',
      SLACK_APP_TOKEN: 'xapp-example-0000000000000',
      SWITCHBOARD_WEBHOOK_SECRET: 'example-webhook-secret-0123456789',
    };
    const cfg = parseConfig(read('example.json5'), env, '/srv');
    expect(Object.keys(cfg.channels)).toEqual(expect.arrayContaining(['websocket', 'telegram', 'slack', 'webhook']));
    expect(cfg.agents.default?.permissions.deny).toEqual(['write_file(**/*.env)']);
    expect(() => parseConfig(read('example.json5'), { ...env, TELEGRAM_BOT_TOKEN: '' }, '/srv')).toThrow(/TELEGRAM_BOT_TOKEN/);
  });
});
