import { describe, expect, it } from 'vitest';
import { api, connectWs, runCli } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';
import { storeRows } from './store-rows.js';

const env = useGateway();

describe('chatting over WebSocket', () => {
  it('answers a header-authenticated client with streamed deltas and a final, and stores the transcript', async () => {
    const { fake, gw } = env;
    const { clientToken, operatorToken, principalId } = gw.credentials();
    const ws = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    const hello = await ws.next((f) => f.type === 'hello_ok');
    expect(hello.principalId).toBe(principalId);
    fake.enqueue({ text: 'Hello there, how can I help you today?' });
    const turn = await chat(ws, 'c1', 'hello');
    expect(turn.accepted.duplicate).toBe(false);
    expect(turn.deltas.length).toBeGreaterThan(1);
    expect(turn.end.type).toBe('final');
    expect(turn.end.text).toBe('Hello there, how can I help you today?');
    expect(turn.deltas.join('')).toBe(turn.end.text);
    // The model saw the channel text as user content, never in the system prompt.
    const req = fake.requests.at(-1)!.body as { system: Array<{ text: string }>; messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(req.system)).not.toContain('hello');
    // The last block carries the rolling prompt-cache breakpoint.
    // The date and time the turn started come first, then the text (see docs/context.md).
    expect(req.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: expect.stringMatching(/^Current time: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(\w+day\)$/) },
          { type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    ws.close();

    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: operatorToken });
    expect(sessions.status).toBe(200);
    const session = (sessions.json.sessions as Array<{ id: string; principalId: string }>).find((s) => s.principalId === principalId)!;
    expect(session).toBeDefined();
    const t = await api(gw, 'GET', `/api/v1/sessions/${session.id}/transcript`, { token: operatorToken });
    expect(t.status).toBe(200);
    const kinds = (t.json.entries as Array<{ kind: string; payload: any }>).map((e) => [e.kind, e.payload.content?.[0]?.text]);
    expect(kinds).toEqual([
      ['user', 'hello'],
      ['assistant', 'Hello there, how can I help you today?'],
    ]);
    // It is really in the store (the SQLite file, or the PostgreSQL database), not only in memory.
    const rows = await storeRows<{ kind: string }>(gw, 'select kind from entries where session_id = ? order by seq', [session.id]);
    expect(rows.map((r) => r.kind)).toEqual(['user', 'assistant']);
  });

  it('authenticates a client by its hello frame', async () => {
    const { gw } = env;
    const { clientToken } = gw.credentials();
    const ws = await connectWs(gw.wsUrl);
    ws.send({ type: 'hello', token: clientToken });
    await ws.next((f) => f.type === 'hello_ok');
    const turn = await chat(ws, 'h1', 'second message');
    expect(turn.end).toMatchObject({ type: 'final', text: 'echo: second message' });
    ws.close();
  });

  it('guards the transcript API: 401 without a token, 403 without the read scope, 401 for a client token', async () => {
    const { gw } = env;
    const { clientToken } = gw.credentials();
    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: gw.credentials().operatorToken });
    const id = (sessions.json.sessions as Array<{ id: string }>)[0]!.id;
    const path = `/api/v1/sessions/${id}/transcript`;
    const none = await api(gw, 'GET', path);
    expect(none.status).toBe(401);
    expect(none.json.code).toBe('unauthorized');
    const created = await runCli(['token', 'create', '--kind', 'operator', '--scopes', 'write', '--name', 'writer'], { gateway: gw });
    expect(created.code).toBe(0);
    const writer = JSON.parse(created.stdout).secret as string;
    const forbidden = await api(gw, 'GET', path, { token: writer });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toContain('read');
    const client = await api(gw, 'GET', path, { token: clientToken });
    expect(client.status).toBe(401);
    const unknown = await api(gw, 'GET', '/api/v1/sessions/does-not-exist/transcript', { token: gw.credentials().operatorToken });
    expect(unknown.status).toBe(404);
  });
});
