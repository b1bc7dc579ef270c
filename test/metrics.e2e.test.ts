import { describe, expect, it } from 'vitest';
import { ALL_CANARIES, api, type GatewayProcess } from '@switchboard/testkit';
import { chat, collectTurn, useGateway } from './helpers.js';
import { type ParsedMetrics, type PromFamily, parseMetrics, sampleValue } from './metrics-helpers.js';

// Issue 18, acceptance 1: /metrics parses with an independent Prometheus text-format parser, and
// its counters move with a turn, a tool call and an approval (each scraped after the turn's final
// frame arrived); on the gateway's port it needs an operator token with `read`, under the
// failed-auth lockout. Writes under secret/ are denied by a rule; other writes are asked.
const MAX_FAILURES = 3;
const env = useGateway({
  config: { permissions: { deny: ['write_file(secret/**)'] }, auth: { maxFailures: MAX_FAILURES, window: '10m', lockout: '10m' } },
  client: true,
});

const WS = { channel: 'websocket', account: 'default' };

async function scrape(gw: GatewayProcess, token = gw.credentials().operatorToken): Promise<{ text: string; metrics: ParsedMetrics }> {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, metrics: parseMetrics(text) };
}

describe('/metrics on the gateway port', () => {
  it('parses as Prometheus text and lists every documented family with its type', async () => {
    const { metrics } = await scrape(env.gw);
    const types: Record<string, PromFamily['type']> = {
      switchboard_turns_total: 'COUNTER',
      switchboard_turn_duration_seconds: 'HISTOGRAM',
      switchboard_model_call_duration_seconds: 'HISTOGRAM',
      switchboard_model_tokens_total: 'COUNTER',
      switchboard_model_cost_usd_total: 'COUNTER',
      switchboard_tool_calls_total: 'COUNTER',
      switchboard_tool_denials_total: 'COUNTER',
      switchboard_approvals_decided_total: 'COUNTER',
      switchboard_approvals_pending: 'GAUGE',
      switchboard_pairing_requests_pending: 'GAUGE',
      switchboard_channel_health: 'GAUGE',
      switchboard_inbox_dead_letters: 'GAUGE',
      switchboard_turns_active: 'GAUGE',
      process_resident_memory_bytes: 'GAUGE',
      nodejs_heap_size_used_bytes: 'GAUGE',
      nodejs_eventloop_lag_p99_seconds: 'GAUGE',
    };
    for (const [name, type] of Object.entries(types)) expect({ name, type: metrics.families.get(name)?.type }).toEqual({ name, type });
    // The WebSocket account is up; nothing is pending or dead on a fresh gateway.
    expect(sampleValue(metrics, 'switchboard_channel_health', WS)).toBe(2);
    expect(sampleValue(metrics, 'switchboard_pairing_requests_pending', WS)).toBe(0);
    expect(sampleValue(metrics, 'switchboard_approvals_pending')).toBe(0);
    expect(sampleValue(metrics, 'switchboard_inbox_dead_letters')).toBe(0);
    expect(sampleValue(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('a turn moves the turn counter and histogram and the model call, token and cost counters', async () => {
    const { gw, ws, fake } = env;
    const before = (await scrape(gw)).metrics;
    const turn = await chat(ws, 'm1', 'hello');
    expect(turn.end.type).toBe('final');
    const usage = fake.requests.at(-1)!.usage as { input_tokens: number; output_tokens: number };
    const after = (await scrape(gw)).metrics;
    const moved = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('switchboard_turns_total', { ...WS, outcome: 'completed' })).toBe(1);
    expect(moved('switchboard_turn_duration_seconds', { channel: 'websocket', outcome: 'completed' })).toBe(1);
    expect(moved('switchboard_model_call_duration_seconds', { model: 'claude-test', outcome: 'ok' })).toBe(1);
    expect(moved('switchboard_model_tokens_total', { model: 'claude-test', kind: 'input' })).toBe(usage.input_tokens);
    expect(moved('switchboard_model_tokens_total', { model: 'claude-test', kind: 'output' })).toBe(usage.output_tokens);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(moved('switchboard_model_cost_usd_total', { model: 'claude-test' })).toBeGreaterThan(0);
    expect(sampleValue(after, 'switchboard_turns_active')).toBe(0);
  });

  it('an approval shows as pending while it waits, then as decided; the tool call it allowed counts as ok', async () => {
    const { gw, ws, fake } = env;
    const before = (await scrape(gw)).metrics;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'metrics.txt', content: 'yes' }, id: 'toolu_m1' }] }, { text: 'Written.' });
    ws.send({ type: 'message', clientId: 'm2', text: 'write it' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'm2');
    const waiting = (await scrape(gw)).metrics;
    expect(sampleValue(waiting, 'switchboard_approvals_pending')).toBe(1);
    expect(sampleValue(waiting, 'switchboard_turns_active')).toBe(1);
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect((await collectTurn(ws, 'm2')).end).toMatchObject({ type: 'final', text: 'Written.' });
    const after = (await scrape(gw)).metrics;
    const moved = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(sampleValue(after, 'switchboard_approvals_pending')).toBe(0);
    expect(moved('switchboard_approvals_decided_total', { outcome: 'allowed' })).toBe(1);
    expect(moved('switchboard_tool_calls_total', { tool: 'write_file', outcome: 'ok' })).toBe(1);
    expect(moved('switchboard_model_call_duration_seconds', { model: 'claude-test' })).toBe(2);
    expect(moved('switchboard_turns_total', { ...WS, outcome: 'completed' })).toBe(1);
  });

  it('a denied approval and a rule denial count as denied tool calls, by what denied them', async () => {
    const { gw, ws, fake } = env;
    const before = (await scrape(gw)).metrics;
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'secret/a.txt', content: 'x' }, id: 'toolu_m2' }] },
      { toolUses: [{ name: 'write_file', input: { path: 'asked.txt', content: 'x' }, id: 'toolu_m3' }] },
      { text: 'Understood.' },
    );
    ws.send({ type: 'message', clientId: 'm3', text: 'write twice' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'm3');
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'deny' });
    expect((await collectTurn(ws, 'm3')).end).toMatchObject({ type: 'final', text: 'Understood.' });
    const after = (await scrape(gw)).metrics;
    const moved = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('switchboard_tool_calls_total', { tool: 'write_file', outcome: 'denied' })).toBe(2);
    expect(moved('switchboard_tool_calls_total', { tool: 'write_file', outcome: 'ok' })).toBe(0);
    expect(moved('switchboard_tool_denials_total', { tool: 'write_file', kind: 'rule' })).toBe(1);
    expect(moved('switchboard_tool_denials_total', { tool: 'write_file', kind: 'person' })).toBe(1);
    expect(moved('switchboard_approvals_decided_total', { outcome: 'denied' })).toBe(1);
  });

  it('a model failure counts as a failed turn and an errored model call', async () => {
    const { gw, ws, fake } = env;
    const before = (await scrape(gw)).metrics;
    fake.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'bad request' } });
    const turn = await chat(ws, 'm4', 'fail please');
    expect(turn.end.type).toBe('error');
    const after = (await scrape(gw)).metrics;
    const moved = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('switchboard_turns_total', { ...WS, outcome: 'model_error' })).toBe(1);
    expect(moved('switchboard_model_call_duration_seconds', { model: 'claude-test', outcome: 'error' })).toBeGreaterThanOrEqual(1);
  });

  it('gauges of stored state tell the truth after a restart; counters start again', async () => {
    const { ws, fake } = env;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'later.txt', content: 'x' }, id: 'toolu_m5' }] }, { text: 'Done.' });
    ws.send({ type: 'message', clientId: 'm5', text: 'write later' });
    await ws.next((f) => f.type === 'approval_request' && f.clientId === 'm5');
    expect(sampleValue((await scrape(env.gw)).metrics, 'switchboard_approvals_pending')).toBe(1);
    // A crash: the turn and its approval stay as stored, and the next start resumes them.
    await env.gw.kill();
    env.gw = await env.gw.restart();
    const after = (await scrape(env.gw)).metrics;
    expect(sampleValue(after, 'switchboard_approvals_pending')).toBe(1);
    expect(sampleValue(after, 'switchboard_approvals_decided_total')).toBe(0);
    expect(sampleValue(after, 'switchboard_turns_total')).toBe(0);
  });

  it('shows no secret, no person and no session: only bounded labels', async () => {
    const { gw } = env;
    const { text, metrics } = await scrape(gw);
    const creds = gw.credentials();
    for (const secret of [...ALL_CANARIES, creds.operatorToken, creds.clientToken]) expect(text).not.toContain(secret);
    expect(text).not.toContain(creds.principalId);
    expect(text).not.toMatch(/write it|hello|metrics\.txt/);
    const labelNames = new Set<string>();
    for (const series of metrics.samples.values()) for (const s of series) for (const k of Object.keys(s.labels ?? {})) labelNames.add(k);
    const allowed = ['channel', 'account', 'outcome', 'model', 'kind', 'tool', 'le', 'quantile', 'type', 'space', 'version', 'major', 'minor', 'patch'];
    expect([...labelNames].filter((l) => !allowed.includes(l))).toEqual([]);
  });

  it('refuses a request without a token (401) and a token without the read scope (403)', async () => {
    const { gw } = env;
    const bare = await fetch(`${gw.url}/metrics`);
    expect(bare.status).toBe(401);
    expect(await bare.text()).not.toContain('switchboard_');
    const notBearer = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Basic abc' } });
    expect(notBearer.status).toBe(401);
    const minted = await api(gw, 'POST', '/api/v1/tokens', {
      token: gw.credentials().operatorToken,
      body: { kind: 'operator', name: 'approver-only', scopes: ['approvals'] },
    });
    expect(minted.status).toBe(201);
    const forbidden = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${minted.json.secret as string}` } });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: 'forbidden' });
    // A client token is not an operator token.
    const client = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.credentials().clientToken}` } });
    expect(client.status).toBe(401);
  });

  // Last: the lockout covers this address for the rest of the file.
  it('wrong tokens lock the address out, and then even the right token is refused with 429', async () => {
    const { gw } = env;
    // The client token above was one failure already.
    for (let i = 1; i < MAX_FAILURES; i++) {
      const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer swb_op_wrong${i}` } });
      expect(res.status).toBe(401);
    }
    const locked = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.credentials().operatorToken}` } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked.text()).not.toContain('switchboard_');
  });
});
