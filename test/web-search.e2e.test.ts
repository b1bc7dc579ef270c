import {
  CANARY_SEARCH_API_KEY,
  type FakeSearchApi,
  type FakeSearxng,
  type GatewayProcess,
  startFakeBrave,
  startFakeSearxng,
  startGateway,
  type WsClient,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, isEnd, toolResultFor, useFakeModel } from './helpers.js';

// Acceptance 2 of issue 15: web_search through the real gateway, against a SearXNG fake and a
// Brave Search fake on loopback; without a provider the tool is not offered.
const model = useFakeModel();
let searxng: FakeSearxng;
let brave: FakeSearchApi;
const gateways: Array<{ gw: GatewayProcess; ws: WsClient }> = [];

beforeAll(async () => {
  searxng = await startFakeSearxng();
  brave = await startFakeBrave({ apiKey: CANARY_SEARCH_API_KEY });
});
afterAll(async () => {
  for (const g of gateways) await g.ws.close();
  await Promise.all([searxng.close(), brave.close()]);
});

async function gatewayWith(webSearch: Record<string, unknown> | undefined) {
  const gw = await startGateway({ modelUrl: model.fake.url, config: webSearch ? { tools: { webSearch } } : {} });
  const ws = await connectClient(gw);
  gateways.push({ gw, ws });
  return { gw, ws };
}

function toolNamesOfLastRequest(): string[] {
  const body = (model.fake.requests.at(-1)?.body ?? {}) as { tools?: Array<{ name: string }> };
  return (body.tools ?? []).map((t) => t.name);
}

/** One turn whose model calls web_search; returns the tool_result and the tools the model was offered. */
async function searchTurn(ws: WsClient, id: string, query: string) {
  const { fake } = model;
  fake.enqueue({ toolUses: [{ name: 'web_search', input: { query, count: 3 }, id: `toolu_${id}` }] }, { text: `searched ${id}` });
  ws.send({ type: 'message', clientId: id, text: `search ${query}` });
  const end = await ws.next((f) => f.clientId === id && (isEnd(f) || f.type === 'approval_request'), 20_000);
  expect(end, JSON.stringify(end)).toMatchObject({ type: 'final', text: `searched ${id}` });
  return toolResultFor(fake, `toolu_${id}`);
}

describe('web_search end to end (acceptance 2)', () => {
  it('through SearXNG: ranked results (title, URL, snippet), fenced as untrusted', async () => {
    searxng.setHits('harbour ferries', [
      { title: 'Ferry timetable', url: 'https://ferries.example/timetable', snippet: 'Two ferries an hour.', score: 3 },
      { title: 'Harbour authority', url: 'https://harbour.example/', snippet: 'Official site.', score: 9 },
      { title: 'Fares', url: 'https://ferries.example/fares', snippet: 'Adults four euros.', score: 5 },
      { title: 'Old forum thread', url: 'https://forum.example/t/1', snippet: 'From 2009.', score: 1 },
    ]);
    const { ws } = await gatewayWith({ provider: 'searxng', baseUrl: searxng.url });
    const result = await searchTurn(ws, 'sx', 'harbour ferries');
    expect(toolNamesOfLastRequest()).toContain('web_search');
    expect(result.is_error).toBeFalsy();
    const text = result.content ?? '';
    expect(text).toContain('<<<EXTERNAL_UNTRUSTED_CONTENT source="web_search" origin="harbour ferries">>>');
    expect(text).toContain(
      '1. Harbour authority\n   https://harbour.example/\n   Official site.\n' +
        '2. Fares\n   https://ferries.example/fares\n   Adults four euros.\n' +
        '3. Ferry timetable\n   https://ferries.example/timetable\n   Two ferries an hour.',
    );
    expect(text).not.toContain('Old forum thread');
    const req = searxng.requests.at(-1);
    expect(req?.path).toBe('/search');
    expect(req?.query.get('format')).toBe('json');
  });

  it('through SearXNG with its JSON format off: the model is told how to enable it', async () => {
    const { ws } = gateways[0] ?? (await gatewayWith({ provider: 'searxng', baseUrl: searxng.url }));
    searxng.json = false;
    try {
      const result = await searchTurn(ws, 'sx403', 'anything');
      expect(result.is_error).toBe(true);
      expect(result.content).toMatch(/SearXNG answered 403: its JSON format is off/);
    } finally {
      searxng.json = true;
    }
  });

  it('through Brave Search: the key goes in X-Subscription-Token and never into the model request', async () => {
    const { ws } = await gatewayWith({ provider: 'brave', baseUrl: brave.url, apiKey: CANARY_SEARCH_API_KEY });
    const result = await searchTurn(ws, 'bv', 'tide tables');
    expect(result.is_error).toBeFalsy();
    expect(result.content).toContain('1. tide tables — result 1\n   https://example.org/tide-tables/1\n   Snippet 1 about tide tables.');
    expect(result.content).toContain('3. tide tables — result 3');
    expect(brave.requests.at(-1)?.headers['x-subscription-token']).toBe(CANARY_SEARCH_API_KEY);
    expect(brave.requests.at(-1)?.query.get('count')).toBe('3');
    for (const r of model.fake.requests) expect(JSON.stringify(r.body)).not.toContain(CANARY_SEARCH_API_KEY);
  });

  it('with no provider configured, web_search is not offered', async () => {
    const { ws } = await gatewayWith(undefined);
    model.fake.enqueue({ text: 'hello' });
    ws.send({ type: 'message', clientId: 'none', text: 'hi' });
    expect(await ws.next((f) => f.clientId === 'none' && isEnd(f), 20_000)).toMatchObject({ type: 'final', text: 'hello' });
    const tools = toolNamesOfLastRequest();
    expect(tools).toContain('web_fetch');
    expect(tools).not.toContain('web_search');
  });
});
