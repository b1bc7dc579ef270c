import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CANARY_SLACK_SIGNING_SECRET,
  CANARY_WEBHOOK_SECRET,
  api,
  connectWs,
  signSlackRequest,
  startFakeAnthropic,
  startFakeSlack,
  startFakeTelegram,
  startGateway,
  startWebhookPlatform,
  stopAllGateways,
  type FakeAnthropic,
  type FakeSlack,
  type FakeTelegram,
  type GatewayProcess,
  type WebhookPlatform,
} from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';
import { ACCOUNT as SLACK_ACCOUNT, httpAccount } from './slack-helpers.js';
import { webhookAccount } from './webhook-helpers.js';
import { ALICE, BOT_USERNAME, TOKEN as TELEGRAM_TOKEN, telegramAccount } from './telegram-helpers.js';
import { PROTO_KEYS, dbChecksums, fcParams, fuzzRuns, hostileJson, invalidJsonText, validValue, type JsonSchema } from './fuzz-helpers.js';
import {
  WEBHOOK_MESSAGE,
  pct,
  slackEvents,
  telegramUpdates,
  urlHostile,
  webhookDecision,
  webhookMessage,
  webhookSigned,
  type FuzzRequest,
} from './fuzz-channel-requests.js';

// Issue 10, acceptance 1 (HTTP half): random near-valid and hostile requests — bodies, path
// parameters and queries, each failing validation by construction — to every control-API route
// (enumerated from /api/v1/openapi.json, with a valid operator token) and to the signed channel
// routes (webhook messages and approval decisions with valid v2 signatures, Slack events with
// valid v0 signatures). The gateway never answers 5xx and never dies, and every table but
// `audit` keeps its row count and checksum. SWITCHBOARD_FUZZ_RUNS sets the total (default
// 10 000, split evenly over the routes); SWITCHBOARD_FUZZ_SEED replays a failing run.

const TOTAL = fuzzRuns();
/** Requests per property run, sent concurrently (a keep-alive pool pipelines them). */
const BATCH = 10;

let model: FakeAnthropic;
let slack: FakeSlack;
let tg: FakeTelegram;
let platform: WebhookPlatform;
let gw: GatewayProcess;
let operatorToken: string;
let exited = false;
let baseline: ReturnType<typeof dbChecksums>;
let sent = 0;
const perRoute = new Map<string, number>();
/** Answers seen per route, by status. */
const statuses = new Map<string, Map<number, number>>();
const seen = (route: string, status: number) => statuses.get(route)?.get(status) ?? 0;
const seenWhere = (route: string, ok: (status: number) => boolean) =>
  [...(statuses.get(route) ?? new Map<number, number>())].filter(([s]) => ok(s)).reduce((n, [, c]) => n + c, 0);

beforeAll(async () => {
  model = await startFakeAnthropic();
  slack = await startFakeSlack();
  tg = await startFakeTelegram({ bots: [{ token: TELEGRAM_TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
  platform = await startWebhookPlatform();
  gw = await startGateway({
    modelUrl: model.url,
    config: {
      channels: {
        webhook: { accounts: { main: webhookAccount(platform, { dmPolicy: 'allowlist', allowFrom: ['alice'] }) } },
        slack: { accounts: { [SLACK_ACCOUNT]: httpAccount(slack) } },
        telegram: {
          accounts: {
            main: telegramAccount(tg, {
              mode: 'webhook',
              webhookSecret: CANARY_WEBHOOK_SECRET,
              webhookUrl: 'https://bot.example/telegram/main',
              dmPolicy: 'allowlist',
              allowFrom: [String(ALICE.user.id)],
            }),
          },
        },
      },
    },
  });
  void gw.exited.then(() => (exited = true));
  operatorToken = gw.credentials().operatorToken;
  // Some state in the tables, so "unchanged" means something: a member, a rule, a finished turn.
  await api(gw, 'POST', '/api/v1/principals', { token: operatorToken, body: { name: 'fuzz-member', role: 'member' } });
  await api(gw, 'POST', '/api/v1/rules', { token: operatorToken, body: { scope: { kind: 'role', id: 'guest' }, behavior: 'deny', rule: 'edit_file' } });
  const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  const setup = await chat(ws, 'fuzz-setup', 'hello');
  await ws.close();
  // The final frame goes out before the turn row is marked done: the baseline waits for that write.
  await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(setup.end.turnId)));
  baseline = dbChecksums(gw.dataDir);
}, 60_000);

afterAll(async () => {
  await stopAllGateways();
  await platform?.close();
  await slack?.close();
  await tg?.close();
  await model?.close();
});

async function send(r: FuzzRequest): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.url}${r.path}`, { method: r.method, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) });
  return { status: res.status, text: await res.text() };
}

const describeReq = (r: FuzzRequest) => `${r.method} ${r.path.slice(0, 300)} ${r.body === undefined ? '' : `body(${r.body.length}): ${r.body.slice(0, 300)}`}`;

/** Sends a batch concurrently; throws (naming the request) on a 5xx, a network error, a dead gateway or a changed table. */
async function check(route: string, batch: FuzzRequest[]): Promise<void> {
  const results = await Promise.all(
    batch.map((r) =>
      send(r).then(
        (res) => ({ r, res }),
        (err: unknown) => ({ r, err }),
      ),
    ),
  );
  sent += batch.length;
  perRoute.set(route, (perRoute.get(route) ?? 0) + batch.length);
  for (const x of results) {
    if (!('err' in x)) {
      let m = statuses.get(route);
      if (!m) statuses.set(route, (m = new Map()));
      m.set(x.res.status, (m.get(x.res.status) ?? 0) + 1);
    }
    if ('err' in x) throw new Error(`${describeReq(x.r)}: request failed: ${String(x.err)}${exited ? ' (the gateway exited)' : ''}`);
    if (x.res.status >= 500) throw new Error(`${describeReq(x.r)}: HTTP ${x.res.status} ${x.res.text.slice(0, 300)}`);
  }
  if (exited) throw new Error('the gateway exited');
  const now = dbChecksums(gw.dataDir);
  const changed = Object.keys({ ...now, ...baseline }).filter((t) => JSON.stringify(now[t]) !== JSON.stringify(baseline[t]));
  if (changed.length > 0) throw new Error(`tables changed (${changed.join(', ')}) by one of:\n${batch.map(describeReq).join('\n')}`);
}

// ---- control API -------------------------------------------------------------------------

interface Param {
  in: 'path' | 'query';
  name: string;
  schema: JsonSchema;
}
interface Operation {
  method: string;
  path: string;
  params: Param[];
  body?: JsonSchema;
  /** Console routes (`x-switchboard-access`): sign-in and members' routes do not take an operator token. */
  access?: string;
}

/** Channel ids that exist, and hostile variants of them (prototype keys after a real type). */
const CHANNEL_IDS = ['websocket:default', 'webhook:main', `slack:${SLACK_ACCOUNT}`, 'telegram:nope', ...PROTO_KEYS.map((k) => `websocket:${k}`)];

function pathParam(op: Operation, p: Param): fc.Arbitrary<string> {
  const plausible = validValue(p.schema).map(String);
  const extra = op.path.startsWith('/api/v1/channels/{id}') && p.name === 'id' ? [fc.constantFrom(...CHANNEL_IDS)] : [];
  return fc.oneof(plausible, fc.uuid(), urlHostile, fc.constantFrom(...PROTO_KEYS), ...extra);
}

/** A query value that `schema` refuses, as text. */
function brokenQueryValue(schema: JsonSchema): fc.Arbitrary<string> {
  const ways: fc.Arbitrary<string>[] = [urlHostile, fc.constantFrom('', '[object Object]', 'NaN', 'undefined')];
  if (schema.enum) ways.push(fc.string({ maxLength: 10 }).filter((s) => !schema.enum!.includes(s)));
  if (schema.maxLength !== undefined) ways.push(fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 500 }).map((n) => 'q'.repeat(n)));
  if (schema.type === 'integer')
    ways.push(fc.constantFrom('-1', '1.5', '1e400', 'abc', '0x10', String((schema.maximum ?? 1e6) + 1), String((schema.minimum ?? 0) - 1)));
  return fc.oneof(...ways);
}

function query(op: Operation): fc.Arbitrary<string> {
  const qs = op.params.filter((p) => p.in === 'query');
  const valid = fc.record(Object.fromEntries(qs.map((p) => [p.name, validValue(p.schema).map(String)])), { requiredKeys: [] }) as fc.Arbitrary<
    Record<string, string>
  >;
  const broken: fc.Arbitrary<Array<[string, string]>> =
    qs.length > 0
      ? fc.tuple(valid, fc.constantFrom(...qs)).chain(([v, p]) => brokenQueryValue(p.schema).map((bad) => Object.entries({ ...v, [p.name]: bad })))
      : fc.constant([]);
  const hostileExtra = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS, 'limit', 'offset', '__proto__[x]', 'a[b][c]'), fc.string({ maxLength: 8 })), urlHostile),
    { maxLength: 3 },
  );
  // A read may also be fully valid (prototype keys included where a string is allowed).
  const either =
    op.method === 'GET'
      ? fc.oneof(
          broken,
          valid.map((v) => Object.entries(v)),
        )
      : broken;
  return fc.tuple(either, hostileExtra).map(([a, b]) => {
    const pairs = [...a, ...b];
    return pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')}`;
  });
}

/** A request to `op` that its validation refuses (or, for a read, any request at all). */
function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const path = fc
    .tuple(...pathParams.map((p) => pathParam(op, p)))
    .map((values) => pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, pct(values[i]!)), op.path));
  let body: fc.Arbitrary<{ body?: string; type?: string }>;
  if (op.method === 'GET') body = fc.constant({});
  else if (op.body) {
    body = fc.oneof(
      { weight: 8, arbitrary: invalidJsonText(op.body).map((b) => ({ body: b, type: 'application/json' })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.string({ maxLength: 40 }),
            fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x'),
          )
          .map(([b, type]) => ({ body: b, type })),
      },
    );
  } else {
    // No body is defined here: none, or a hostile one the route must ignore or refuse.
    body = fc.oneof(
      fc.constant({}),
      hostileJson.map((v) => ({ body: JSON.stringify(v) ?? 'null', type: 'application/json' })),
    );
  }
  const q = op.method === 'GET' ? query(op) : fc.oneof(fc.constant(''), query(op));
  return fc.tuple(path, q, body).map(([p, qs, b]) => ({
    method: op.method,
    path: `${p}${qs}`,
    headers: { authorization: `Bearer ${operatorToken}`, ...(b.type ? { 'content-type': b.type } : {}) },
    ...(b.body !== undefined ? { body: b.body } : {}),
  }));
}

async function operations(): Promise<Operation[]> {
  const doc = (await api(gw, 'GET', '/api/v1/openapi.json')).json as {
    paths: Record<
      string,
      Record<string, { parameters?: Param[]; requestBody?: { content: Record<string, { schema: JsonSchema }> }; 'x-switchboard-access'?: string }>
    >;
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(methods)) {
      const body = o.requestBody?.content['application/json']?.schema;
      const access = o['x-switchboard-access'];
      ops.push({ method: method.toUpperCase(), path, params: o.parameters ?? [], ...(body ? { body } : {}), ...(access ? { access } : {}) });
    }
  }
  return ops;
}

// ---- the properties ------------------------------------------------------------------------

async function fuzzRoute(route: string, arb: fc.Arbitrary<FuzzRequest>, n: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(arb, { minLength: BATCH, maxLength: BATCH }), (batch) => check(route, batch)),
    fcParams(Math.ceil(n / BATCH)),
  );
}

describe('fuzz: HTTP routes', () => {
  it('every control-API route (from the OpenAPI document) survives refused and hostile input unchanged', async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThanOrEqual(30);
    const n = Math.ceil(TOTAL / (ops.length + 4));
    for (const o of ops) await fuzzRoute(`${o.method} ${o.path}`, requestFor(o), n);
    for (const o of ops) {
      const route = `${o.method} ${o.path}`;
      expect(perRoute.get(route), route).toBeGreaterThanOrEqual(Math.min(n, 100));
      // The token is valid, so validation (not authentication) answered; a body route never succeeded.
      // Console routes that take no operator token (GET /auth/session, /me…) answer it 401: that is their refusal.
      const takesOperator = o.access === undefined || o.access === 'viewer';
      if (takesOperator) expect(seen(route, 401), route).toBe(0);
      else
        expect(
          seenWhere(route, (st) => st < 300),
          route,
        ).toBe(0);
      if (o.body)
        expect(
          seenWhere(route, (st) => st < 300),
          route,
        ).toBe(0);
    }
  }, 600_000);

  it('the signed channel routes (webhook message and approval, Slack events, Telegram webhook) survive refused and hostile input unchanged', async () => {
    const n = Math.ceil(TOTAL / ((await operations()).length + 4));
    await fuzzRoute('webhook message', webhookMessage, n);
    await fuzzRoute('webhook approval', webhookDecision, n);
    await fuzzRoute('slack events', slackEvents, n);
    await fuzzRoute('telegram webhook', telegramUpdates, n);
    for (const r of ['webhook message', 'webhook approval', 'slack events', 'telegram webhook']) {
      expect(perRoute.get(r), r).toBeGreaterThanOrEqual(Math.min(n, 100));
      // Every request was correctly signed, so each one reached the route's own validation.
      expect(seen(r, 401), r).toBe(0);
    }
    expect(seenWhere('webhook message', (st) => st < 300)).toBe(0);
    expect(seenWhere('webhook approval', (st) => st < 300)).toBe(0);
    expect(seen('webhook message', 400)).toBeGreaterThan(0);
    expect(seen('slack events', 200)).toBeGreaterThan(0);
  }, 600_000);

  it('valid webhook messages with hostile ids (prototype keys as rooms, senders, threads) from senders off the allowlist: no 5xx, nothing stored', async () => {
    const valid = validValue(WEBHOOK_MESSAGE)
      .filter((m) => (m as { sender: { id: string } }).sender.id !== 'alice')
      .map((m) => webhookSigned('/channels/webhook/main', JSON.stringify(m)));
    await fuzzRoute('webhook message (valid)', valid, Math.max(100, Math.ceil(TOTAL / 50)));
    expect(seenWhere('webhook message (valid)', (st) => st !== 202)).toBe(0);
  }, 600_000);

  it('answers the inputs this fuzz once found 500s with (Slack: a non-string challenge, an event with fields of other types)', async () => {
    const bodies = [
      '{"type":"url_verification","challenge":{"toString":null}}',
      '{"type":"event_callback","event":{"type":"message","subtype":[{"toString":null}],"user":null}}',
      '{"type":"event_callback","event":{"type":"message","channel":7,"ts":"1700000000.000100","user":"U0NOBODY01","text":"hi"}}',
      '{"type":"event_callback","event":{"type":"message","channel":"D0DM000001","ts":"1700000000.000100","user":"U0NOBODY01","text":{"toString":null}}}',
    ];
    for (const body of bodies) {
      const ts = Math.floor(Date.now() / 1000);
      const res = await send({
        method: 'POST',
        path: `/channels/slack/${SLACK_ACCOUNT}/events`,
        headers: {
          'content-type': 'application/json',
          'x-slack-request-timestamp': String(ts),
          'x-slack-signature': signSlackRequest(CANARY_SLACK_SIGNING_SECRET, ts, body),
        },
        body,
      });
      expect(res.status, body).toBe(200);
    }
    expect(dbChecksums(gw.dataDir)).toEqual(baseline);
  });

  it('is still up and unchanged afterwards, and still answers a genuine request', async () => {
    if (process.env.SWITCHBOARD_FUZZ_SUMMARY) console.log([...statuses].map(([r, m]) => `${r}: ${[...m].map(([st, c]) => `${st}×${c}`).join(' ')}`).join('\n'));
    expect(sent).toBeGreaterThanOrEqual(TOTAL);
    expect(exited).toBe(false);
    expect(dbChecksums(gw.dataDir)).toEqual(baseline);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const m = platform.dm('alice', 'after the fuzz');
    expect((await platform.send(gw, m)).status).toBe(202);
    await platform.waitFor((c) => c.body.type === 'reply' && c.body.replyTo === m.id);
  });
});
