import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, startGateway, type GatewayProcess, type WsFrame } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';

const env = useGateway({ config: { model: { fallback: 'claude-fallback' }, limits: { modelMaxRetries: 2 } }, client: true });

const models = (from: number) => env.fake.requests.slice(from).map((r) => (r.body as { model: string }).model);

/** Deltas streamed after the last attempt_reset (what the person ends up seeing). */
function visibleText(frames: WsFrame[]): { resets: number; text: string; before: string } {
  const resetAt = frames.map((f) => f.type).lastIndexOf('attempt_reset');
  const deltas = (from: number, to: number) =>
    frames
      .slice(from, to)
      .filter((f) => f.type === 'delta')
      .map((f) => f.text)
      .join('');
  return { resets: frames.filter((f) => f.type === 'attempt_reset').length, text: deltas(resetAt + 1, frames.length), before: deltas(0, Math.max(resetAt, 0)) };
}

describe('model failure recovery', () => {
  it('retries a 429 honouring retry-after-ms, and a 529', async () => {
    const { fake, ws } = env;
    let start = fake.requests.length;
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'slow down', headers: { 'retry-after-ms': '5' } } }, { text: 'after the 429' });
    const a = await chat(ws, 'r429', 'one');
    expect(a.end).toMatchObject({ type: 'final', text: 'after the 429' });
    expect(fake.requests.length - start).toBe(2);
    start = fake.requests.length;
    fake.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }, { text: 'after the 529' });
    const b = await chat(ws, 'r529', 'two');
    expect(b.end).toMatchObject({ type: 'final', text: 'after the 529' });
    expect(fake.requests.length - start).toBe(2);
  });

  it('retries a mid-stream overloaded_error and resets the streamed draft first', async () => {
    const { fake, ws } = env;
    fake.enqueue(
      { streamError: { afterEvents: 6, type: 'overloaded_error' }, text: 'This first attempt will break off midway.' },
      { text: 'The fresh answer.' },
    );
    const t = await chat(ws, 'rmid', 'three');
    expect(t.end).toMatchObject({ type: 'final', text: 'The fresh answer.' });
    const v = visibleText(t.frames);
    expect(v.before.length).toBeGreaterThan(0);
    expect(v.resets).toBe(1);
    expect(v.text).toBe('The fresh answer.');
  });

  it('retries a truncated stream (no message_stop)', async () => {
    const { fake, ws } = env;
    fake.enqueue({ endAfterEvents: 6, text: 'Cut off before the end of the message.' }, { text: 'Complete this time.' });
    const t = await chat(ws, 'rtrunc', 'four');
    expect(t.end).toMatchObject({ type: 'final', text: 'Complete this time.' });
    expect(visibleText(t.frames)).toMatchObject({ resets: 1, text: 'Complete this time.' });
  });

  it('does not retry a spend-limit 429', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'spend limit', details: { error_code: 'enforced_spend_limit_reached' } } });
    const t = await chat(ws, 'rspend', 'five');
    expect(t.end).toMatchObject({ type: 'error', code: 'model_error' });
    expect(t.end.message).toMatch(/spend limit/i);
    expect(fake.requests.length - start).toBe(1);
  });

  it('switches to the fallback model once the retry budget is spent, and records it in the turn usage', async () => {
    const { fake, gw, ws } = env;
    const start = fake.requests.length;
    const err = { error: { status: 500, type: 'api_error', message: 'boom' } };
    fake.enqueue(err, err, err, { text: 'answered by the fallback' });
    const t = await chat(ws, 'rfallback', 'six');
    expect(t.end).toMatchObject({ type: 'final', text: 'answered by the fallback' });
    expect(models(start)).toEqual(['claude-test', 'claude-test', 'claude-test', 'claude-fallback']);
    // The final frame goes out before the turn row records its usage: wait for that write.
    await gw.waitForLog((l) => l.includes('turn finished') && l.includes(t.end.turnId));
    const db = new Database(join(gw.dataDir, 'switchboard.db'), { readonly: true });
    const row = db.prepare('select usage from turns where id = ?').get(t.end.turnId) as { usage: string };
    db.close();
    const usage = JSON.parse(row.usage) as { fallbackUsed: boolean; retries: number; models: Record<string, { calls: number }> };
    expect(usage).toMatchObject({ fallbackUsed: true, retries: 2 });
    expect(usage.models['claude-fallback']?.calls).toBe(1);
    expect(gw.logs().some((l) => l.includes('switching to the fallback model'))).toBe(true);
  });

  it('ends a stream that keeps failing with a clear error, keeping the message in the transcript', async () => {
    const { fake, gw, ws } = env;
    const start = fake.requests.length;
    const err = { error: { status: 500, type: 'api_error', message: 'boom' } };
    fake.enqueue(err, err, err, err, err, err);
    const t = await chat(ws, 'rdead', 'seven: keeps failing');
    expect(t.end).toMatchObject({ type: 'error', code: 'model_error' });
    expect(t.end.message).toContain('HTTP 500');
    expect(fake.requests.length - start).toBe(6);
    const { operatorToken, principalId } = gw.credentials();
    const s = await api(gw, 'GET', `/api/v1/sessions?principalId=${principalId}`, { token: operatorToken });
    const tr = await api(gw, 'GET', `/api/v1/sessions/${s.json.sessions[0].id}/transcript`, { token: operatorToken });
    expect(JSON.stringify(tr.json.entries)).toContain('seven: keeps failing');
  });
});

describe('a stalled stream', () => {
  let gw2: GatewayProcess;
  beforeAll(async () => {
    // Only the idle timer under test is shortened.
    gw2 = await startGateway({ modelUrl: env.fake.url, config: { limits: { modelStreamIdleTimeout: '300ms' } } });
  });

  it('is aborted by the idle timer and retried', async () => {
    const { fake } = env;
    const c = await connectWs(gw2.wsUrl, { headers: bearer(gw2.credentials().clientToken) });
    const start = fake.requests.length;
    fake.enqueue({ stallAfterEvents: 6, text: 'This stream goes silent halfway.' }, { text: 'Answer after the stall.' });
    const t = await chat(c, 'rstall', 'eight');
    expect(t.end).toMatchObject({ type: 'final', text: 'Answer after the stall.' });
    expect(fake.requests.length - start).toBe(2);
    expect(visibleText(t.frames)).toMatchObject({ resets: 1, text: 'Answer after the stall.' });
    c.close();
  });
});
