import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dbChecksums, deepJsonText, fcParams, fuzzRuns, hostileJson, hostileString, PROTO_KEYS, withKey } from './fuzz-helpers.js';
import { useGateway } from './helpers.js';

// Issue 18: hostile requests to the OpenAI-compatible endpoint through the real gateway, with a
// valid client token: bodies that fail validation by construction, hostile session and
// idempotency headers. Every answer is a 4xx with an OpenAI-style error body (never a 5xx), the
// gateway stays up and nothing is stored (every table but `audit` keeps its rows and checksum).

const RUNS = Math.max(50, Math.floor(fuzzRuns(2_000) / 10));
const BATCH = 10;
const env = useGateway({ config: { gateway: { connectionTimeout: '5m' }, channels: { openai: { accounts: { default: {} } } } } });

const user = (content: unknown) => ({ role: 'user', content });
/** Bodies that are wrong by construction: not an object, no messages, an unknown model, a last message that is not a user's text. */
const brokenBody: fc.Arbitrary<unknown> = fc.oneof(
  hostileJson.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v) || !('messages' in v)),
  fc.tuple(hostileString, hostileJson).map(([model, extra]) => withKey({ model: `nope-${model}`, messages: [user('hi')] }, 'extra', extra)),
  fc
    .tuple(fc.constantFrom(...PROTO_KEYS), hostileJson)
    .map(([k, v]) => withKey({ model: 'default', messages: [user('hi'), { role: 'assistant', content: 'x' }] }, k, v)),
  hostileJson.map((content) => ({
    model: 'default',
    messages: [user(typeof content === 'string' && content.trim() ? [{ type: 'image_url', image_url: content }] : content === '' ? '' : { content })],
  })),
  hostileJson.map((messages) => ({
    model: 'default',
    messages: Array.isArray(messages) && messages.length > 0 ? [...messages, { role: 'tool', content: 'x' }] : messages,
  })),
  fc.constantFrom(...PROTO_KEYS).map((k) => ({ model: k, messages: [user('hi')] })),
);

/** A header value fetch can send that the endpoint must refuse. */
const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const badLabel = fc.string({ unit: printable, minLength: 1, maxLength: 100 }).filter((s) => s.trim() === s && s.length > 0 && !/^[A-Za-z0-9_-]{1,64}$/.test(s));
const badKey = fc.oneof(
  fc.integer({ min: 256, max: 4000 }).map((n) => 'k'.repeat(n)),
  fc.string({ unit: printable, minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s.includes(' ')),
);

async function post(body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.gw.credentials().clientToken}`, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

function expectRefusal(r: { status: number; json: unknown }, what: string): void {
  if (r.status < 400 || r.status >= 500) throw new Error(`${what}: answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  const e = (r.json as { error?: Record<string, unknown> }).error;
  expect(e && typeof e.message === 'string' && typeof e.type === 'string' && typeof e.code === 'string').toBe(true);
}

describe('fuzz: the OpenAI-compatible endpoint', () => {
  it('refuses hostile bodies and headers with OpenAI-style 4xx answers; nothing is stored and the gateway stays up', async () => {
    const before = dbChecksums(env.gw.dataDir);
    await fc.assert(
      fc.asyncProperty(fc.array(brokenBody, { minLength: BATCH, maxLength: BATCH }), async (bodies) => {
        const answers = await Promise.all(bodies.map((b) => post(JSON.stringify(b) ?? 'null')));
        for (const [i, a] of answers.entries()) expectRefusal(a, `body ${JSON.stringify(bodies[i])?.slice(0, 200)}`);
      }),
      fcParams(RUNS),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          badLabel.map((v) => ({ 'X-Switchboard-Session': v })),
          badKey.map((v) => ({ 'Idempotency-Key': v })),
        ),
        async (headers) => {
          expectRefusal(await post(JSON.stringify({ model: 'default', messages: [user('hi')] }), headers), `headers ${JSON.stringify(headers)}`);
        },
      ),
      fcParams(RUNS),
    );
    await fc.assert(
      fc.asyncProperty(deepJsonText, async (text) => expectRefusal(await post(text), 'deep JSON')),
      fcParams(10),
    );
    expect(dbChecksums(env.gw.dataDir)).toEqual(before);
    // Still up, and still answering a genuine request.
    const ok = await post(JSON.stringify({ model: 'default', messages: [user('still there?')] }));
    expect(ok.status).toBe(200);
  });
});
