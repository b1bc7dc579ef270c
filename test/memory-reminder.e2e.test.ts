import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { chat, connectClient, useGateway } from './helpers.js';

// Issue 15 (memory): before an auto-compaction the agent is reminded to save what matters. With
// W = 20,000 tokens the auto-compaction threshold is 13,000; turns of ~800 tokens step through
// the reminder band (85–100 % of it) before the history is summarized.
const env = useGateway({
  config: {
    models: { 'claude-test': { contextWindow: 21_000, outputReserve: 1_000 } },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
  },
});

const REMINDER = 'will soon be summarized';
type Body = { messages: Array<{ role: string; content: Array<{ type: string; text?: string }> }> };

describe('the save reminder before an auto-compaction', () => {
  it('one request just below the threshold carries it, in the last user message before the person’s text; it is never stored', async () => {
    const { fake, gw } = env;
    const ws = await connectClient(gw);
    fake.setHandler(() => ({ text: 'ok' }));
    const filler = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    let reminded = -1;
    for (let turn = 0; turn < 40 && reminded < 0; turn++) {
      const before = fake.requests.length;
      const res = await chat(ws, `r${turn}`, `message ${turn}: ${filler}`);
      expect(res.end.type).toBe('final');
      const req = fake.requests.slice(before).find((r) => JSON.stringify(r.body).includes(REMINDER));
      if (req) {
        reminded = turn;
        const last = (req.body as Body).messages.at(-1)!;
        expect(last.role).toBe('user');
        const texts = last.content.map((b) => b.text ?? '');
        expect(texts[0]).toContain('memory_save');
        expect(texts.at(-1)).toContain(`message ${turn}:`);
      }
    }
    fake.setHandler(undefined);
    expect(reminded).toBeGreaterThan(0);
    // Only one request carried it, and the stored transcript never holds it.
    expect(fake.requests.filter((r) => JSON.stringify(r.body).includes(REMINDER))).toHaveLength(1);
    const { operatorToken } = gw.credentials();
    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: operatorToken });
    const id = (sessions.json.sessions as Array<{ id: string }>)[0]!.id;
    const transcript = await api(gw, 'GET', `/api/v1/sessions/${id}/transcript`, { token: operatorToken });
    expect(JSON.stringify(transcript.json)).not.toContain(REMINDER);
    ws.close();
  });
});
