import { describe, expect, it } from 'vitest';
import { bearer, chat, isEnd, useGateway } from './helpers.js';

// Session grants lapse after permissions.sessionGrantTtl (shortened here; the default is 12 h).
const env = useGateway({ config: { permissions: { sessionGrantTtl: '600ms' } }, client: true });

type Frame = Record<string, unknown>;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${env.gw.url}/api/v1${path}`, {
    method,
    headers: { ...bearer(env.gw.credentials().operatorToken), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

/** Sends a message whose turn writes `path`; returns the first frame that shows how it went. */
function writeTurn(id: string, path: string): Promise<Frame> {
  const { fake, ws } = env;
  fake.enqueue({ toolUses: [{ name: 'write_file', input: { path, content: id }, id: `toolu_${id}` }] }, { text: `done ${id}` });
  ws.send({ type: 'message', clientId: id, text: `write ${path}` });
  return ws.next((f) => f.clientId === id && (f.type === 'approval_request' || isEnd(f)));
}

describe('session grants expire (permissions.sessionGrantTtl)', () => {
  it('a session rule is audited when granted, lapses after the TTL (audited), and the person is told at their next message', async () => {
    const { ws } = env;
    await chat(ws, 'hello', 'hello');
    const session = (await api('GET', '/sessions')).json.sessions[0] as { id: string };

    const created = await api('POST', '/rules', { scope: { kind: 'session', id: session.id }, behavior: 'allow', rule: 'write_file(granted.txt)' });
    expect(created.status).toBe(201);
    const ruleId = created.json.rule.id as string;
    const granted = (await api('GET', '/audit?action=grant.created')).json.entries as Array<{ target: string; detail: Record<string, unknown> }>;
    expect(granted.find((e) => e.target === ruleId)?.detail).toMatchObject({
      kind: 'rule',
      sessionId: session.id,
      rule: 'write_file(granted.txt)',
      expiresAt: expect.any(String),
    });

    // The grant works while it lasts.
    expect(await writeTurn('w1', 'granted.txt')).toMatchObject({ type: 'final', text: 'done w1' });

    // It lapses on its own: logged and audited, and the rule is gone.
    await env.gw.waitForLog((l) => l.includes('session grant lapsed') && l.includes(ruleId), 15_000);
    const lapsed = (await api('GET', '/audit?action=grant.lapsed')).json.entries as Array<{ target: string; detail: Record<string, unknown> }>;
    expect(lapsed.find((e) => e.target === ruleId)?.detail).toMatchObject({ kind: 'rule', sessionId: session.id, rule: 'write_file(granted.txt)' });
    expect(((await api('GET', '/rules')).json.rules as Array<{ id: string }>).some((r) => r.id === ruleId)).toBe(false);

    // The next message: the person is told, and the write is asked again.
    const asked = await writeTurn('w2', 'granted.txt');
    const notice = ws.frames.find((f) => f.type === 'notice' && typeof f.text === 'string' && f.text.includes('write_file(granted.txt)'));
    expect(notice?.text).toMatch(/expired/i);
    expect(asked.type).toBe('approval_request');
    ws.send({ type: 'approve', approvalId: asked.approvalId, decision: 'deny' });
    await ws.next((f) => f.clientId === 'w2' && isEnd(f));
  });

  it('a session rule does not outlive its TTL across a restart', async () => {
    const session = (await api('GET', '/sessions')).json.sessions[0] as { id: string };
    const created = await api('POST', '/rules', { scope: { kind: 'session', id: session.id }, behavior: 'allow', rule: 'write_file(again.txt)' });
    const ruleId = created.json.rule.id as string;
    env.gw = await env.gw.restart();
    await env.gw.waitForLog((l) => l.includes('session grant lapsed') && l.includes(ruleId), 15_000);
    expect(((await api('GET', '/rules')).json.rules as Array<{ id: string }>).some((r) => r.id === ruleId)).toBe(false);
  });
});
