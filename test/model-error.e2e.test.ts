import { describe, expect, it } from 'vitest';
import { api, connectWs } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';

const env = useGateway({ config: { limits: { modelMaxRetries: 0 } } });

describe('a model error', () => {
  it('ends the turn with a clear error frame and keeps the user message in the transcript', async () => {
    const { fake, gw } = env;
    const { clientToken, operatorToken, principalId } = gw.credentials();
    const ws = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    fake.enqueue({ error: { status: 500, type: 'api_error', message: 'upstream internal detail 42' } });
    const turn = await chat(ws, 'e1', 'will this fail?');
    expect(turn.end).toMatchObject({ type: 'error', code: 'model_error', clientId: 'e1' });
    expect(turn.end.message).toContain('HTTP 500');
    // The upstream body is not passed through to the person.
    expect(JSON.stringify(turn.frames)).not.toContain('upstream internal detail');
    const sessions = await api(gw, 'GET', `/api/v1/sessions?principalId=${principalId}`, { token: operatorToken });
    const id = (sessions.json.sessions as Array<{ id: string }>)[0]!.id;
    const t = await api(gw, 'GET', `/api/v1/sessions/${id}/transcript`, { token: operatorToken });
    expect((t.json.entries as Array<{ kind: string; payload: any }>).map((e) => [e.kind, e.payload.content[0].text])).toEqual([['user', 'will this fail?']]);
    // The session still works, and the failed turn's message stays in the history the model sees.
    const next = await chat(ws, 'e2', 'try again');
    expect(next.end).toMatchObject({ type: 'final', text: 'echo: try again' });
    const msgs = (fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<{ text: string }> }> }).messages;
    expect(msgs).toHaveLength(1);
    // Each turn's date-and-time stamp (see docs/context.md) comes before its text.
    expect(msgs[0]!.content.map((c) => (c.text.startsWith('Current time: ') ? 'stamp' : c.text))).toEqual(['stamp', 'will this fail?', 'stamp', 'try again']);
    ws.close();
  });
});
