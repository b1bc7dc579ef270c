import { describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import { isSummaryRequest, summaryHandler, type WsClient } from '@switchboard/testkit';
import { askFrame, chat, connectClient, useGateway } from './helpers.js';

// Issue 13, acceptance 8 on the WebSocket: `{type:"command", name:"compact"}` answers a `compacted`
// frame and `{type:"command", name:"usage"}` a `usage` frame, with the same results as the chat
// commands on Telegram and Slack.

const env = useGateway({ config: { budgets: { timezone: 'Europe/Berlin', roles: { owner: { day: { tokens: 1_000_000 } } } } } });

const owner = (): Promise<WsClient> => connectClient(env.gw);

const ask = askFrame;

describe('WebSocket: compact and usage frames', () => {
  it('compact: too short at first, then a compacted frame; the next request starts from the summary', async () => {
    const { fake } = env;
    fake.setHandler(summaryHandler({ text: 'SUMMARY: the owner said hello three times.' }));
    const ws = await owner();
    expect(await ask(ws, { type: 'command', name: 'compact' }, 'compacted')).toEqual({ type: 'compacted', outcome: 'not_compacted', reason: 'nothing' });
    for (let n = 1; n <= 4; n++) await chat(ws, `c-${n}`, `hello number ${n}`);
    await env.gw.waitForLog((l) => l.includes('turn finished') && l.includes('"state":"completed"'));
    const before = fake.requests.length;
    const done = await ask(ws, { type: 'command', name: 'compact', args: 'keep the greetings' }, 'compacted');
    expect(done).toMatchObject({ type: 'compacted', outcome: 'compacted' });
    expect(done.tokensAfter as number).toBeLessThan(done.tokensBefore as number);
    const summary = fake.requests.slice(before).find(isSummaryRequest)!;
    expect(JSON.stringify(summary.body.messages)).toContain('keep the greetings');

    const t = await chat(ws, 'c-after', 'and now?');
    expect(t.end.type).toBe('final');
    const first = (fake.requests.at(-1)!.body.messages![0]!.content as Array<{ text?: string }>)[0]!.text!;
    expect(first.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(first).toContain('SUMMARY: the owner said hello three times.');
    await ws.close();
    fake.setHandler(undefined);
  });

  it('usage: the person’s spend today and this month equals the fake’s reported usage, against the role’s budget', async () => {
    const { fake, gw } = env;
    const ws = await owner();
    await ask(ws, { type: 'command', name: 'new' }, 'session_reset');
    const t = await chat(ws, 'u-1', 'what does this cost?');
    await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(t.end.turnId)));
    const spent = fake.requests
      .filter((r) => r.path === '/v1/messages' && r.usage)
      .reduce((sum, r) => sum + r.usage!.input_tokens + r.usage!.output_tokens + r.usage!.cache_read_input_tokens + r.usage!.cache_creation_input_tokens, 0);
    const f = await ask(ws, { type: 'command', name: 'usage' }, 'usage');
    expect(f).toMatchObject({ type: 'usage', outcome: 'spend', usage: { timezone: 'Europe/Berlin' } });
    const periods = (
      f.usage as { periods: Array<{ period: string; tokens: number; resetsAt: string; limit?: { scope: string; id: string; tokens?: number } }> }
    ).periods;
    expect(periods.map((p) => p.period)).toEqual(['day', 'month']);
    for (const p of periods) expect(p.tokens).toBe(spent);
    expect(periods[0]!.limit).toEqual({ scope: 'role', id: 'owner', tokens: 1_000_000 });
    // The day resets at the next 00:00 in Berlin.
    const reset = new Date(periods[0]!.resetsAt);
    expect(reset.getTime()).toBeGreaterThan(Date.now());
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(reset)).toBe('00:00');
    await ws.close();
  });
});
