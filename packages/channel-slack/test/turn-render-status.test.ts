import type { WebClient } from '@slack/web-api';
import { AsyncQueue, type TurnEvent } from '@switchboard/core';
import { FakeChannelEnv } from '@switchboard/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalBoard } from '../src/approval-board.js';
import { slackDraftText } from '../src/draft-status.js';
import { TurnRender } from '../src/turn-render.js';

let env: FakeChannelEnv;
beforeAll(() => {
  env = new FakeChannelEnv();
});
afterAll(async () => {
  await env.close();
});

type Call = { method: 'postMessage' | 'update' | 'delete'; text?: string };

/** A Web API client that records chat calls; `posted` resolves with the first postMessage. */
function recordingClient(calls: Call[]) {
  let resolvePosted: () => void = () => undefined;
  const posted = new Promise<void>((r) => {
    resolvePosted = r;
  });
  const chat = {
    postMessage: async (args: { text: string }) => {
      calls.push({ method: 'postMessage', text: args.text });
      resolvePosted();
      return { ok: true, ts: `1700000000.${String(calls.length).padStart(6, '0')}` };
    },
    update: async (args: { text: string }) => {
      calls.push({ method: 'update', text: args.text });
      return { ok: true };
    },
    delete: async () => {
      calls.push({ method: 'delete' });
      return { ok: true };
    },
  };
  return { client: { chat } as unknown as WebClient, posted };
}

describe('Slack TurnRender tool status lines', () => {
  it('a flood of progress reports inside one edit interval makes no extra update; the final replaces the draft without status lines', async () => {
    const calls: Call[] = [];
    const { client, posted } = recordingClient(calls);
    const to = { channel: 'slack', account: 'team', id: 'D0DM000001', kind: 'dm' } as const;
    const ctx = env.contextFor({ type: 'slack', account: 'team' });
    const render = new TurnRender(
      // An interval no test run reaches: after the first draft, nothing but the final may update it.
      {
        api: client,
        drafts: client,
        editIntervalMs: 3_600_000,
        board: new ApprovalBoard(),
        log: pino({ level: 'silent' }),
        scrub: (t) => t.replaceAll('s3cr3t', '[x]'),
      },
      to,
      'st1',
      await ctx.ledger.begin('st1', to),
    );
    const events = new AsyncQueue<TurnEvent>();
    const done = (async () => {
      for await (const ev of events) await render.on(ev);
      await render.close();
    })();
    events.push({ type: 'tool_start', toolUseId: 'u1', name: 'web_fetch', input: { url: 'https://s3cr3t.example.com/<!channel>' }, readOnly: true });
    await posted;
    for (let i = 1; i <= 1000; i++) events.push({ type: 'tool_progress', toolUseId: 'u1', name: 'web_fetch', message: `${i} KB` });
    events.push({ type: 'tool_end', toolUseId: 'u1', name: 'web_fetch', result: { type: 'tool_result', tool_use_id: 'u1', content: 'page' } });
    events.push({ type: 'text_delta', text: 'The page says hi.' });
    events.push({ type: 'turn_end', state: 'completed', reason: 'completed', text: 'The page says hi.' });
    events.close();
    await done;
    expect(calls).toEqual([
      { method: 'postMessage', text: '🔧 web_fetch [x].example.com…' },
      { method: 'update', text: 'The page says hi.' },
    ]);
  });
});

describe('slackDraftText', () => {
  it('puts the escaped status block under the text, and shows either alone', () => {
    expect(slackDraftText('Checking <now>', '🔧 read_file a<b>.md…')).toBe('Checking &lt;now&gt;\n\n🔧 read_file a&lt;b&gt;.md…');
    expect(slackDraftText('', '✅ exec ls')).toBe('✅ exec ls');
    expect(slackDraftText('**hi**', '')).toBe('*hi*');
    expect(slackDraftText('  ', '')).toBe('');
  });
});
