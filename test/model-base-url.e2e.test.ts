import { describe, expect, it } from 'vitest';
import { connectWs, startGateway } from '@switchboard/testkit';
import { bearer, chat, useFakeModel } from './helpers.js';

// Issue 11: a model error names the URL it called and, when the base URL ends with /v1 (the
// client adds /v1/messages itself), says to remove that suffix.
const model = useFakeModel();

describe('model errors name the URL (issue 11)', () => {
  it('a base URL ending in /v1 gets an error naming the URL and the fix', async () => {
    const gw = await startGateway({ modelUrl: `${model.fake.url}/v1`, config: { limits: { modelMaxRetries: 0 } } });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const turn = await chat(ws, 'v1-1', 'hello');
    expect(turn.end).toMatchObject({ type: 'error', code: 'model_error' });
    expect(turn.end.message).toContain(`${model.fake.url}/v1/v1/messages`);
    expect(turn.end.message).toContain('model.baseUrl');
    expect(turn.end.message).toMatch(/remove .*\/v1/);
    ws.close();
    await gw.stop();
  });

  it('an unreachable model API is named by its URL, without a /v1 hint', async () => {
    const gw = await startGateway({ modelUrl: 'http://127.0.0.1:9', config: { limits: { modelMaxRetries: 0 } } });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const turn = await chat(ws, 'v1-2', 'hello');
    expect(turn.end).toMatchObject({ type: 'error', code: 'model_error' });
    expect(turn.end.message).toContain('http://127.0.0.1:9/v1/messages');
    expect(turn.end.message).not.toContain('remove');
    ws.close();
    await gw.stop();
  });
});
