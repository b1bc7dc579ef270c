import { describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '@switchboard/testkit';
import { bearer, chat, isEnd, useGateway } from './helpers.js';

const env = useGateway();

async function connect(cursor?: number): Promise<WsClient> {
  const ws = await connectWs(env.gw.wsUrl, { headers: bearer(env.gw.credentials().clientToken) });
  await ws.next((f) => f.type === 'hello_ok');
  if (cursor !== undefined) ws.send({ type: 'hello', cursor });
  return ws;
}

/** Reconnects with a cursor and collects the replayed finals (hello_ok names the newest one). */
async function replay(cursor: number): Promise<{ ws: WsClient; ends: Array<Record<string, any>> }> {
  const ws = await connect(cursor);
  const ok = await ws.next((f) => f.type === 'hello_ok');
  const ends: Array<Record<string, any>> = [];
  while ((ends.at(-1)?.cursor ?? cursor) < ok.cursor) ends.push(await ws.next(isEnd));
  return { ws, ends };
}

describe('crash and resume', () => {
  it('(a) after a completed turn: replay by cursor, no second model call for a re-sent id, the session keeps working', async () => {
    const { fake } = env;
    const ws = await connect();
    const first = await chat(ws, 'a1', 'first question');
    expect(first.end).toMatchObject({ type: 'final', text: 'echo: first question' });
    const cursor1 = first.end.cursor as number;
    ws.close();
    await env.gw.kill('SIGKILL');
    env.gw = await env.gw.restart();

    const missed = await replay(0);
    expect(missed.ends.filter((f) => f.clientId === 'a1')).toHaveLength(1);
    missed.ws.close();
    const none = await replay(cursor1);
    expect(none.ends).toHaveLength(0);

    const calls = fake.requests.length;
    const again = await chat(none.ws, 'a1', 'first question');
    expect(again.accepted.duplicate).toBe(true);
    expect(again.end).toMatchObject({ type: 'final', text: 'echo: first question', turnId: first.end.turnId });
    expect(fake.requests.length).toBe(calls);

    const next = await chat(none.ws, 'a2', 'second question');
    expect(next.end).toMatchObject({ type: 'final', text: 'echo: second question' });
    expect(fake.requests.length).toBe(calls + 1);
    none.ws.close();
  });

  it('(b) killed while text streams: one final in the end, no duplicate work, history stays valid', async () => {
    const { fake } = env;
    const ws = await connect();
    fake.enqueue({ holdAfterEvents: 4, text: 'This answer is being streamed slowly.' });
    const held = fake.requests.length;
    ws.send({ type: 'message', clientId: 'b1', text: 'tell me something long' });
    const delta = await ws.next((f) => f.type === 'delta' && f.clientId === 'b1');
    expect(delta.text.length).toBeGreaterThan(0);
    await fake.waitForRequests(held + 1);
    const before = ws.frames.length;
    await env.gw.kill('SIGKILL');
    fake.release();
    const lastCursor = (ws.frames.filter(isEnd).at(-1)?.cursor as number | undefined) ?? 0;
    expect(ws.frames.slice(before).filter((f) => isEnd(f) && f.clientId === 'b1')).toHaveLength(0);
    ws.close();

    env.gw = await env.gw.restart();
    // The resumed turn asks the model again (default echo) and delivers exactly one final.
    const ws2 = await connect(lastCursor);
    const ends = [await ws2.next((f) => isEnd(f) && f.clientId === 'b1', 20_000)];
    expect(ends[0]).toMatchObject({ type: 'final', text: 'echo: tell me something long' });
    const calls = fake.requests.length;
    // Re-sending the id gets the stored answer, not a second model call.
    const again = await chat(ws2, 'b1', 'tell me something long');
    expect(again.accepted.duplicate).toBe(true);
    expect(again.end.turnId).toBe(ends[0]!.turnId);
    expect(fake.requests.length).toBe(calls);
    // The next turn works: the fake's tool_use/tool_result validation accepts the history.
    const next = await chat(ws2, 'b2', 'and now?');
    expect(next.end).toMatchObject({ type: 'final', text: 'echo: and now?' });
    const history = (fake.requests.at(-1)!.body as { messages: Array<{ role: string }> }).messages.map((m) => m.role);
    expect(history.every((r, i) => r === (i % 2 === 0 ? 'user' : 'assistant'))).toBe(true);
    // Exactly one end frame per client id over this connection's lifetime (apart from the forced re-send).
    const endsSeen = ws2.frames.filter((f) => isEnd(f) && f.clientId === 'b2');
    expect(endsSeen).toHaveLength(1);
    ws2.close();
  });
});
