import { describe, expect, it } from 'vitest';
import { chat, useGateway } from './helpers.js';

const env = useGateway({ client: true });

type Body = { messages: Array<{ role: string; content: Array<{ type: string; text?: string }> }> };

describe('turn limits', () => {
  it('continues a reply cut by max_tokens at most 3 times, then finishes with what there is and says so', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    for (const n of [1, 2, 3, 4]) fake.enqueue({ text: `part ${n}`, stopReason: 'max_tokens' });
    const t = await chat(ws, 'mt', 'write a very long essay');
    expect(fake.requests.length - start).toBe(4);
    for (const r of fake.requests.slice(start + 1)) {
      const last = (r.body as Body).messages.at(-1)!;
      expect(last.role).toBe('user');
      expect(last.content.at(-1)!.text).toMatch(/cut off by the output token limit/);
    }
    expect(t.end.type).toBe('final');
    expect(t.end.text).toBe('part 1\n\npart 2\n\npart 3\n\npart 4');
    expect(t.end.note).toMatch(/cut off/);
    // The history stays valid: the next turn is accepted by the API fake.
    const next = await chat(ws, 'mt2', 'thanks');
    expect(next.end).toMatchObject({ type: 'final', text: 'echo: thanks' });
  });

  it('ends with prompt_too_long and tells the person how to start afresh', async () => {
    const { fake, ws } = env;
    // Refused on every request (reactive compaction and its retries included), the turn ends prompt_too_long.
    fake.setHandler(() => ({ error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 103078 tokens > 102398 maximum' } }));
    const t = await chat(ws, 'ptl', 'one more thing');
    fake.setHandler(undefined);
    expect(t.end).toMatchObject({ type: 'error', code: 'prompt_too_long' });
    expect(t.end.message).toMatch(/new session/i);
    ws.send({ type: 'new_session' });
    await ws.next((f) => f.type === 'session_reset');
    const fresh = await chat(ws, 'ptl2', 'hello again');
    expect(fresh.end).toMatchObject({ type: 'final', text: 'echo: hello again' });
    expect((fake.requests.at(-1)!.body as Body).messages).toHaveLength(1);
  });
});
