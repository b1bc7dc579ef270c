import { describe, expect, it } from 'vitest';
import { configVariables, parseConfig } from '../src/config.js';

describe('configVariables: which ${VAR} each key was read from', () => {
  it('records the variables per dotted key, never the values', () => {
    const text = `{
      channels: { slack: { accounts: { team: { botToken: "\${SLACK_BOT}", mode: "socket", appToken: "xapp-\${APP_A}-\${APP_B:-x}" } } } },
    }`;
    const cfg = parseConfig(text, { SLACK_BOT: 'xoxb-secret-value-1-long-enough', APP_A: 'a-long-enough-part-of-a-token' }, '/srv');
    const vars = configVariables(cfg);
    expect(vars.get('channels.slack.accounts.team.botToken')).toEqual(['SLACK_BOT']);
    expect(vars.get('channels.slack.accounts.team.appToken')).toEqual(['APP_A', 'APP_B']);
    expect(vars.get('channels.slack.accounts.team.mode')).toBeUndefined();
    expect(JSON.stringify([...vars])).not.toContain('xoxb-secret-value-1-long-enough');
  });

  it('a config parsed some other way has none', () => {
    const cfg = parseConfig('{}', {}, '/srv');
    expect(configVariables(cfg).size).toBe(0);
    expect(configVariables({ ...cfg }).size).toBe(0);
  });
});
