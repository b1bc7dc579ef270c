import { describe, expect, it } from 'vitest';
import { api, type RecordedBlock, type RecordedRequest } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

// A system prompt well above the fake's minimum cacheable prefix (1,024 tokens, ~4 characters each).
const SYSTEM_PROMPT = Array.from({ length: 120 }, (_, i) => `Rule ${i + 1}: answer plainly, keep the conversation friendly and never invent facts.`).join('\n');

const env = useGateway({
  client: true,
  config: {
    agents: { default: { systemPrompt: SYSTEM_PROMPT } },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 100, perMinute: 600 } } } } },
  },
});

/** Every block of a request that carries `cache_control`, named by where it sits. */
function breakpoints(body: RecordedRequest['body']): Array<{ at: string; block: RecordedBlock }> {
  const found: Array<{ at: string; block: RecordedBlock }> = [];
  (body.tools ?? []).forEach((t, i) => {
    if (t.cache_control) found.push({ at: `tools.${i}`, block: t as RecordedBlock });
  });
  if (Array.isArray(body.system)) {
    body.system.forEach((b, i) => {
      if (b.cache_control) found.push({ at: `system.${i}`, block: b });
    });
  }
  (body.messages ?? []).forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((b, j) => {
      if (b.cache_control) found.push({ at: `messages.${i}.content.${j}`, block: b });
    });
  });
  return found;
}

describe('prompt caching through the gateway', () => {
  it('a 20-message conversation carries valid breakpoints and reads the cache on every request after the first', async () => {
    const { gw, ws, fake } = env;
    const token = gw.credentials().operatorToken;
    const since = new Date(Date.now() - 1000).toISOString();
    const before = fake.requests.length;
    let readSum = 0;
    let writeSum = 0;
    let inputSum = 0;
    for (let n = 1; n <= 20; n++) {
      const t = await chat(ws, `pc${n}`, `message number ${n}: tell me something about the number ${n}`);
      expect(t.end.type, JSON.stringify(t.end)).toBe('final');
      await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(t.end.turnId)));
      const req = fake.requests.at(-1)!;
      expect(req.path).toBe('/v1/messages');
      // The fake refuses invalid breakpoints (a 400 fails the turn): these were accepted.
      const marks = breakpoints(req.body);
      expect(marks.length).toBeGreaterThanOrEqual(2);
      expect(marks.length).toBeLessThanOrEqual(4);
      const system = req.body.system as RecordedBlock[];
      expect(marks.map((m) => m.at)).toContain(`system.${system.length - 1}`);
      const messages = req.body.messages!;
      const last = messages.at(-1)!.content as RecordedBlock[];
      expect(marks.map((m) => m.at)).toContain(`messages.${messages.length - 1}.content.${last.length - 1}`);
      for (const m of marks) expect(m.block.cache_control).toEqual({ type: 'ephemeral' });
      // Tools in name order, so the prefix is byte-stable.
      const names = (req.body.tools ?? []).map((x) => x.name);
      expect(names).toEqual([...names].sort());

      const usage = req.usage!;
      expect(usage).toBeDefined();
      if (n === 1) {
        expect(usage.cache_read_input_tokens).toBe(0);
        expect(usage.cache_creation_input_tokens).toBeGreaterThan(1024);
      } else {
        // The stable prefix plus the previous turn's messages are read; only the newest turn is written.
        expect(usage.cache_read_input_tokens, `request ${n}`).toBeGreaterThan(1024);
        expect(usage.cache_creation_input_tokens).toBeLessThan(usage.cache_read_input_tokens);
      }
      readSum += usage.cache_read_input_tokens;
      writeSum += usage.cache_creation_input_tokens;
      inputSum += usage.input_tokens;

      // The turn's usage record carries the cache counters the fake reported.
      const stats = await api(gw, 'GET', `/api/v1/stats/turns?since=${encodeURIComponent(since)}`, { token });
      expect(stats.status).toBe(200);
      expect(stats.json.usage).toMatchObject({ turns: n, cacheReadInputTokens: readSum, cacheCreationInputTokens: writeSum });
    }
    expect(fake.requests.length - before).toBe(20);
    // Over the conversation, most input tokens came from the cache (the bench target is 70 %).
    expect(readSum / (readSum + writeSum + inputSum)).toBeGreaterThan(0.85);
  });
});
