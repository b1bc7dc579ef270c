import { describe, expect, it } from 'vitest';
import { connectWs, runCli, type WsClient } from '@switchboard/testkit';
import { bearer, collectTurn, isEnd, useGateway } from './helpers.js';

const env = useGateway();

type Body = { messages: Array<{ role: string; content: Array<{ type: string; text?: string; tool_use_id?: string }> }> };

/** A block's text, with the turn's date-and-time stamp (see docs/context.md) shown as `stamp`. */
const shown = (c: { type: string; text?: string }) => (c.text?.startsWith('Current time: ') ? 'stamp' : (c.text ?? c.type));

async function client(name: string): Promise<WsClient> {
  const r = await runCli(['token', 'create', '--kind', 'client', '--principal', name], { gateway: env.gw });
  const secret = JSON.parse(r.stdout).secret as string;
  const ws = await connectWs(env.gw.wsUrl, { headers: bearer(secret) });
  await ws.next((f) => f.type === 'hello_ok');
  return ws;
}

describe('queue modes', () => {
  it('followup (default): messages sent during a turn become the next turns, answered in order', async () => {
    const { fake } = env;
    const ws = await client('follow');
    const start = fake.requests.length;
    fake.enqueue({ hold: true, text: 'answer one' });
    ws.send({ type: 'message', clientId: 'f1', text: 'first' });
    await fake.waitForRequests(start + 1);
    ws.send({ type: 'message', clientId: 'f2', text: 'second' });
    ws.send({ type: 'message', clientId: 'f3', text: 'third' });
    await ws.next((f) => f.type === 'accepted' && f.clientId === 'f3');
    fake.release();
    const ends = [await ws.next(isEnd), await ws.next(isEnd), await ws.next(isEnd)];
    expect(ends.map((e) => [e.clientId, e.text])).toEqual([
      ['f1', 'answer one'],
      ['f2', 'echo: second'],
      ['f3', 'echo: third'],
    ]);
    expect(ends[0]!.cursor).toBeLessThan(ends[1]!.cursor);
    // Each later turn's request carries the history before it.
    const last = fake.requests.at(-1)!.body as Body;
    expect(last.messages.map((m) => m.content.map(shown).join('|'))).toEqual(['stamp|first', 'answer one', 'stamp|second', 'echo: second', 'stamp|third']);
    ws.close();
  });

  it('steer: a message sent during a turn is injected into the running turn at its next model call', async () => {
    const { fake } = env;
    const ws = await client('steerer');
    ws.send({ type: 'queue', mode: 'steer' });
    expect(await ws.next((f) => f.type === 'queue_ok')).toMatchObject({ mode: 'steer' });
    const start = fake.requests.length;
    fake.enqueue({ hold: true, toolUses: [{ name: 'list_files', input: {}, id: 'toolu_steer_list' }] }, { text: 'Listed, and noted your extra request.' });
    ws.send({ type: 'message', clientId: 's1', text: 'list my files' });
    await fake.waitForRequests(start + 1);
    ws.send({ type: 'message', clientId: 's2', text: 'and also count them' });
    await ws.next((f) => f.type === 'accepted' && f.clientId === 's2');
    fake.release();
    const steered = await ws.next((f) => isEnd(f) && f.clientId === 's2');
    expect(steered).toMatchObject({ type: 'final', reason: 'steered', text: '' });
    const main = await collectTurn(ws, 's1');
    expect(main.end).toMatchObject({ type: 'final', text: 'Listed, and noted your extra request.' });
    expect(fake.requests.length - start).toBe(2);
    const second = (fake.requests[start + 1]!.body as Body).messages.at(-1)!;
    expect(second.content.map((c) => c.type)).toEqual(['tool_result', 'text']);
    expect(second.content[0]!.tool_use_id).toBe('toolu_steer_list');
    expect(second.content[1]!.text).toBe('and also count them');
    // The steered message did not become a turn of its own: the next turn's history has it once,
    // inside the steered turn, and no answer of its own.
    ws.send({ type: 'message', clientId: 's3', text: 'thanks' });
    await collectTurn(ws, 's3');
    const history = (fake.requests.at(-1)!.body as Body).messages.map((m) => m.content.map(shown).join('|'));
    // A steered message carries no stamp of its own: it joins the turn that has one.
    expect(history).toEqual(['stamp|list my files', 'tool_use', 'tool_result|and also count them', 'Listed, and noted your extra request.', 'stamp|thanks']);
    expect(ws.frames.filter((f) => isEnd(f) && f.clientId === 's2')).toHaveLength(1);
    ws.close();
  });

  it('new_session starts an empty history', async () => {
    const { fake } = env;
    const ws = await client('fresh');
    ws.send({ type: 'message', clientId: 'n1', text: 'remember me' });
    await ws.next((f) => isEnd(f) && f.clientId === 'n1');
    ws.send({ type: 'new_session' });
    await ws.next((f) => f.type === 'session_reset');
    ws.send({ type: 'message', clientId: 'n2', text: 'who am I?' });
    await ws.next((f) => isEnd(f) && f.clientId === 'n2');
    expect((fake.requests.at(-1)!.body as Body).messages).toEqual([
      // The date and time the turn started come first (see docs/context.md), then the text.
      {
        role: 'user',
        content: [
          { type: 'text', text: expect.stringMatching(/^Current time: /) },
          { type: 'text', text: 'who am I?', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    ws.close();
  });
});
