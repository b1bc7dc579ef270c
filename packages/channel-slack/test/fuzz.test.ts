import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ChatCommands, type ChannelPeople } from '@switchboard/core';
import { ApprovalBoard } from '../src/approval-board.js';
import { slackHttpRoutes } from '../src/http-receiver.js';
import { mapMessageEvent, parseMessageEvent } from '../src/inbound.js';
import { handleBlockActions, runSlashCommand, type InteractionDeps } from '../src/interactions.js';
import { describeSlackError, networkCause, retryAfterMs, slackErrorCode } from '../src/slack-errors.js';
import { messageOf, slackFaultBoundary } from '../src/slack-faults.js';
import { hostileThrownValues } from '@switchboard/testkit';

const log = pino({ level: 'silent' });
const RUNS = { numRuns: 300 };

/** Values that break naive describers: throwing getters, hostile proxies, revoked proxies, cycles (checked in a loop: fast-check itself cannot hold proxies). */
const HOSTILE: unknown[] = [
  ...hostileThrownValues(),
  (() => {
    const a: Record<string, unknown> = { code: 'slack_webapi_request_error' };
    a.original = a;
    a.cause = a;
    return a;
  })(),
];
const hostile = fc.constantFrom<unknown>(Object.create(null), Symbol('s'), 10n, undefined, null, { toString: () => ({}) });

/** Error-like shapes: the SDK's codes with arbitrary fields, fetch failures with arbitrary causes. */
const errorShape = fc.oneof(
  fc.anything(),
  hostile,
  fc.record(
    {
      code: fc.oneof(
        fc.constantFrom(
          'slack_webapi_request_error',
          'slack_webapi_http_error',
          'slack_webapi_platform_error',
          'slack_webapi_rate_limited_error',
          'ECONNREFUSED',
          'ENOTFOUND',
        ),
        fc.anything(),
      ),
      data: fc.oneof(fc.anything(), fc.record({ error: fc.anything() }, { requiredKeys: [] })),
      statusCode: fc.anything(),
      retryAfter: fc.anything(),
      name: fc.oneof(fc.constantFrom('TimeoutError', 'AbortError'), fc.anything()),
      original: fc.oneof(
        fc.anything(),
        hostile,
        fc.record({ cause: fc.anything(), errors: fc.anything(), code: fc.anything(), address: fc.anything(), port: fc.anything() }, { requiredKeys: [] }),
      ),
      cause: fc.anything(),
      errors: fc.anything(),
      hostname: fc.anything(),
      address: fc.anything(),
      port: fc.anything(),
    },
    { requiredKeys: [] },
  ),
);

/** Interaction deps whose platform and gateway calls fail with arbitrary values (or succeed). */
function deps(fail: unknown, failing: boolean): InteractionDeps {
  const maybe = <T>(v: T) => (failing ? Promise.reject(fail) : Promise.resolve(v));
  const people = {
    principalFor: () => maybe({ principalId: 'p1', role: 'user' }),
    resetSession: () => maybe(undefined),
    stopRunning: () => maybe(true),
    sessionStatus: () => maybe({ sessionId: 's', model: 'm', mode: 'default', queueMode: 'followup', entries: 0, pendingApprovals: 0, running: false }),
    setMode: () => maybe({ ok: true, mode: 'plan' }),
    contextReport: () =>
      maybe({
        model: 'm',
        tokens: 10,
        contextWindow: 200_000,
        window: 180_000,
        messages: 1,
        clearedResults: 0,
        lastCompaction: { at: '2026-12-01T21:00:00.000Z', trigger: 'auto', tokensBefore: 9, tokensAfter: 1 },
        consumers: [{ name: 'history', tokens: 10 }],
      }),
  } as unknown as ChannelPeople;
  const ctx = {
    people,
    approvals: { decide: () => maybe({ outcome: 'decided', status: 'allowed', tool: 'bash' }) },
    commands: new ChatCommands(people),
  };
  const api = { chat: { postEphemeral: () => maybe({ ok: true }), update: () => maybe({ ok: true }) } };
  return { ctx: ctx as never, api: api as never, board: new ApprovalBoard(), account: 'acct', log };
}

describe('Slack error describers are total', () => {
  it('never throw and always give a short string code, for any thrown value', () => {
    fc.assert(
      fc.property(errorShape, fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }), (err, timeout) => {
        const d = describeSlackError(err, timeout);
        expect(typeof d.code).toBe('string');
        expect(d.code.length).toBeLessThanOrEqual(64);
        expect(typeof slackErrorCode(err)).toBe('string');
        const r = retryAfterMs(err);
        expect(r === null || Number.isFinite(r)).toBe(true);
        const c = networkCause(err, timeout);
        expect(c === undefined || typeof c === 'string').toBe(true);
        expect(typeof messageOf(err)).toBe('string');
        const faults = slackFaultBoundary(log, 'acct');
        faults.record({ channel: 'slack:acct', task: 'render', conversation: 'C1' }, err);
        expect(faults.summary()).toMatch(/^1 task failure/);
      }),
      RUNS,
    );
  });

  it('a rate-limit retryAfter from a peer becomes a finite wait of 0 ms to a day (found by the fuzz: -1.8e305 s gave -Infinity)', () => {
    const limited = (retryAfter: number) => ({ code: 'slack_webapi_rate_limited_error', retryAfter });
    expect(retryAfterMs(limited(-1.797693134862316e305))).toBe(0);
    expect(retryAfterMs(limited(1.797693134862316e305))).toBe(86_400_000);
    expect(retryAfterMs(limited(-5))).toBe(0);
    expect(retryAfterMs(limited(30))).toBe(30_000);
  });

  it('never throw for hostile values (throwing getters, proxies, cycles)', async () => {
    for (const err of HOSTILE) {
      expect(typeof describeSlackError(err, 10).code).toBe('string');
      expect(typeof slackErrorCode(err)).toBe('string');
      expect(retryAfterMs(err)).toBeNull();
      expect(typeof messageOf(err)).toBe('string');
      slackFaultBoundary(log, 'acct').record({ channel: 'slack:acct', task: 'render', conversation: 'C1' }, err);
      await handleBlockActions(deps(err, true), {
        type: 'block_actions',
        user: { id: 'U1' },
        container: { channel_id: 'C1' },
        actions: [{ action_id: 'allow:a1' }],
      });
      await handleBlockActions(deps(err, true), err);
      expect(typeof (await runSlashCommand(deps(err, true), { text: 'status', user_id: 'U1', channel_id: 'D1' }))).toBe('string');
      expect(typeof (await runSlashCommand(deps(err, true), err))).toBe('string');
      expect('drop' in parseMessageEvent(err) || 'event' in parseMessageEvent(err)).toBe(true);
    }
  });

  it('classifies what the policy depends on', () => {
    expect(describeSlackError({ code: 'slack_webapi_platform_error', data: { error: 'invalid_auth' } }).kind).toBe('permanent');
    expect(describeSlackError({ code: 'slack_webapi_http_error', statusCode: 401 }).kind).toBe('permanent');
    expect(describeSlackError({ code: 'slack_webapi_http_error', statusCode: 503 })).toEqual({ kind: 'server', code: 'http_503' });
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 9 }),
    });
    expect(describeSlackError({ code: 'slack_webapi_request_error', original: refused })).toEqual({
      kind: 'network',
      code: 'request_error',
      cause: 'ECONNREFUSED 127.0.0.1:9',
    });
    const dns = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('getaddrinfo'), { code: 'ENOTFOUND', hostname: 'slack.com' }) });
    expect(describeSlackError(dns).cause).toBe('ENOTFOUND slack.com');
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(describeSlackError({ code: 'slack_webapi_request_error', original: timeout }, 500).cause).toBe('timed out after 500 ms');
  });
});

describe('Slack inbound parsers never throw', () => {
  const eventish = fc.oneof(
    fc.jsonValue(),
    fc.record(
      {
        type: fc.oneof(fc.constantFrom('message', 'app_mention'), fc.jsonValue()),
        subtype: fc.oneof(fc.constantFrom(undefined, 'thread_broadcast', 'bot_message'), fc.jsonValue()),
        channel: fc.oneof(fc.constantFrom('D1', 'C1', ''), fc.string()),
        channel_type: fc.oneof(fc.constantFrom('im', 'channel'), fc.string()),
        user: fc.oneof(fc.constant('U1'), fc.string()),
        text: fc.string(),
        ts: fc.oneof(fc.constant('1.0001'), fc.string()),
        thread_ts: fc.string(),
        bot_id: fc.string(),
      },
      { requiredKeys: [] },
    ),
  );

  it('events: parseMessageEvent then mapMessageEvent, for any JSON', () => {
    fc.assert(
      fc.property(eventish, fc.string(), fc.boolean(), (ev, team, withSelf) => {
        const parsed = parseMessageEvent(ev);
        if ('drop' in parsed) {
          expect(typeof parsed.drop).toBe('string');
          return;
        }
        const mapped = mapMessageEvent(parsed.event, team, 'acct', withSelf ? { teamId: 'T1', botUserId: 'UBOT', botId: 'B1' } : null);
        expect('drop' in mapped || typeof mapped.message.text === 'string').toBe(true);
      }),
      RUNS,
    );
  });

  const actionish = fc.oneof(
    fc.jsonValue(),
    fc.record(
      {
        type: fc.constant('block_actions'),
        user: fc.oneof(fc.record({ id: fc.oneof(fc.constant('U1'), fc.jsonValue()), team_id: fc.jsonValue() }, { requiredKeys: [] }), fc.jsonValue()),
        container: fc.oneof(
          fc.record({ channel_id: fc.oneof(fc.constant('C1'), fc.jsonValue()), message_ts: fc.jsonValue() }, { requiredKeys: [] }),
          fc.jsonValue(),
        ),
        actions: fc.oneof(
          fc.array(fc.record({ action_id: fc.oneof(fc.constantFrom('approve:a1', 'allow:a1', 'deny:a1', 'always:a1'), fc.jsonValue()) }, { requiredKeys: [] })),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: [] },
    ),
  );

  it('block_actions and slash commands: any payload, any failure of the gateway or Slack, never a throw', async () => {
    await fc.assert(
      fc.asyncProperty(actionish, errorShape, fc.boolean(), async (payload, fail, failing) => {
        await handleBlockActions(deps(fail, failing), payload);
      }),
      RUNS,
    );
    const commandish = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          command: fc.jsonValue(),
          text: fc.oneof(fc.constantFrom('new', 'stop', 'status', 'mode plan', 'mode', 'context'), fc.jsonValue()),
          user_id: fc.oneof(fc.constant('U1'), fc.jsonValue()),
          channel_id: fc.oneof(fc.constant('D1'), fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(commandish, errorShape, fc.boolean(), async (payload, fail, failing) => {
        expect(typeof (await runSlashCommand(deps(fail, failing), payload))).toBe('string');
      }),
      RUNS,
    );
  });

  it('the HTTP receiver answers every signed body with a status, whatever the handlers throw', async () => {
    const secret = 'fuzz-signing-secret-0123456789';
    let fail: unknown;
    const app = Fastify();
    await app.register(
      slackHttpRoutes({
        account: 'acct',
        signingSecret: secret,
        log,
        onEvent: async () => {
          throw fail;
        },
        onInteraction: () => undefined,
        onCommand: async () => 'ok',
      }),
    );
    const sign = (body: string) => {
      const ts = String(Math.floor(Date.now() / 1000));
      return { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}` };
    };
    const bodyish = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .record(
          { type: fc.constantFrom('event_callback', 'url_verification'), challenge: fc.jsonValue(), event: fc.jsonValue(), event_id: fc.jsonValue() },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(bodyish, errorShape, fc.jsonValue(), async (body, thrown, form) => {
        fail = thrown;
        const ev = await app.inject({
          method: 'POST',
          url: '/channels/slack/acct/events',
          payload: body,
          headers: { 'content-type': 'application/json', ...sign(body) },
        });
        // A handler failure is a 500/503 the route chose (Slack retries), never a crash.
        expect([200, 400, 500, 503]).toContain(ev.statusCode);
        if (ev.statusCode >= 500) expect(ev.json()).toMatchObject({ ok: false });
        const formBody = new URLSearchParams(
          typeof form === 'object' && form !== null && !Array.isArray(form)
            ? { payload: JSON.stringify(form) }
            : { command: '/x', text: String(JSON.stringify(form)) },
        ).toString();
        const it2 = await app.inject({
          method: 'POST',
          url: '/channels/slack/acct/interactive',
          payload: formBody,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...sign(formBody) },
        });
        expect([200, 400]).toContain(it2.statusCode);
      }),
      { numRuns: 150 },
    );
    await app.close();
  });
});
