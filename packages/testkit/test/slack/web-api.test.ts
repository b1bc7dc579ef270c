import { readFileSync } from 'node:fs';
import { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient, WebClientEvent } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_SLACK_APP_TOKEN, CANARY_SLACK_BOT_TOKEN, runLogPath, SLACK_MAX_TEXT, startFakeSlack, type FakeSlack } from '../../src/index.js';
import { silentLogger } from './silent-logger.js';

let fake: FakeSlack;
let web: WebClient;

beforeAll(async () => {
  fake = await startFakeSlack();
  web = new WebClient(CANARY_SLACK_BOT_TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger: silentLogger });
});
afterAll(async () => {
  await fake.close();
});

const C = 'C0CHAN0001';

describe('fake Slack Web API with the real @slack/web-api WebClient', () => {
  it('auth.test returns the bot identity; the call is recorded token-less', async () => {
    const r = await web.auth.test();
    expect(r).toMatchObject({ ok: true, team_id: 'T0TEST0001', user_id: 'U0BOT00001', bot_id: 'B0BOT00001' });
    const call = fake.callsTo('auth.test').at(-1)!;
    expect(call).toMatchObject({ tokenKind: 'bot', contentType: 'none', status: 200, ok: true }); // no args: empty body
    expect(JSON.stringify(call)).not.toContain(CANARY_SLACK_BOT_TOKEN);
  });

  it('chat.postMessage records blocks/unfurl/thread_ts; ts increments from 1700000000.000100', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*hi*' } }];
    const a = await web.chat.postMessage({ channel: C, text: 'first', blocks, unfurl_links: false, unfurl_media: false });
    const b = await web.chat.postMessage({ channel: C, text: 'reply', thread_ts: a.ts! });
    expect(a).toMatchObject({ ok: true, channel: C, ts: '1700000000.000100' });
    expect(a.message).toMatchObject({ text: 'first', user: 'U0BOT00001', bot_id: 'B0BOT00001' });
    expect(b.ts).toBe('1700000000.000101');
    const call = fake.callsTo('chat.postMessage')[0]!;
    expect(call.contentType).toBe('form'); // the SDK form-encodes, JSON-stringifying blocks into a field
    expect(call.params).toMatchObject({ channel: C, blocks, unfurl_links: false, unfurl_media: false });
    const [m1, m2] = fake.messages(C);
    expect(m1).toMatchObject({ text: 'first', blocks, unfurl_links: false, unfurl_media: false });
    expect(m2).toMatchObject({ text: 'reply', thread_ts: a.ts });
  });

  it('chat.update / chat.delete change what messages() returns', async () => {
    const { ts } = await web.chat.postMessage({ channel: 'D0DM000001', text: 'draft…' });
    await web.chat.update({ channel: 'D0DM000001', ts: ts!, text: 'draft… more' });
    const u = await web.chat.update({ channel: 'D0DM000001', ts: ts!, text: 'final' });
    expect(u).toMatchObject({ ok: true, ts, text: 'final' });
    expect(fake.messages('D0DM000001')).toEqual([expect.objectContaining({ ts, text: 'final', edits: 2, history: ['draft…', 'draft… more', 'final'] })]);
    await web.chat.delete({ channel: 'D0DM000001', ts: ts! });
    expect(fake.messages('D0DM000001')).toEqual([]);
    expect(fake.messages('D0DM000001', { includeDeleted: true })[0]).toMatchObject({ deleted: true });
    await expect(web.chat.update({ channel: 'D0DM000001', ts: ts!, text: 'x' })).rejects.toMatchObject({ data: { error: 'message_not_found' } });
  });

  it('postEphemeral, conversations.info, users.info, reactions.add', async () => {
    const e = await web.chat.postEphemeral({ channel: C, user: 'U0USER0001', text: 'only you' });
    expect(e.message_ts).toMatch(/^1700000000\.\d{6}$/);
    expect(fake.ephemerals.at(-1)).toMatchObject({ channel: C, user: 'U0USER0001', text: 'only you' });
    expect((await web.conversations.info({ channel: 'D0DM000001' })).channel).toMatchObject({ is_im: true, user: 'U0USER0001' });
    expect((await web.conversations.info({ channel: C })).channel).toMatchObject({ name: 'general', is_channel: true, is_member: true });
    expect((await web.users.info({ user: 'U0BOT00001' })).user).toMatchObject({ is_bot: true });
    expect((await web.users.info({ user: 'U0USER0001' })).user).toMatchObject({ name: 'test-user', is_bot: false });
    await web.reactions.add({ channel: C, timestamp: '1710000000.000100', name: 'eyes' });
    await expect(web.reactions.add({ channel: C, timestamp: '1710000000.000100', name: 'eyes' })).rejects.toMatchObject({ data: { error: 'already_reacted' } });
    expect(fake.reactions).toContainEqual({ channel: C, timestamp: '1710000000.000100', name: 'eyes' });
  });

  it('platform errors: invalid_auth, not_allowed_token_type, msg_too_long, channel_not_found', async () => {
    const bad = new WebClient('xoxb-not-a-known-token', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger: silentLogger });
    const err = await bad.auth.test().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebAPIPlatformError);
    expect((err as WebAPIPlatformError).data).toMatchObject({ ok: false, error: 'invalid_auth' });
    const appTokenClient = new WebClient(CANARY_SLACK_APP_TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger: silentLogger });
    await expect(appTokenClient.chat.postMessage({ channel: C, text: 'x' })).rejects.toMatchObject({ data: { error: 'not_allowed_token_type' } });
    await expect(web.chat.postMessage({ channel: C, text: 'x'.repeat(SLACK_MAX_TEXT + 1) })).rejects.toMatchObject({ data: { error: 'msg_too_long' } });
    await expect(web.chat.postMessage({ channel: C, text: 'x'.repeat(SLACK_MAX_TEXT) })).resolves.toMatchObject({ ok: true });
    await expect(web.chat.postMessage({ channel: 'nope', text: 'x' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
  });

  it('failNext 429 + rejectRateLimitedCalls → WebAPIRateLimitedError with retryAfter', async () => {
    const strict = new WebClient(CANARY_SLACK_BOT_TOKEN, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
    fake.failNext('chat.postMessage', { status: 429, retryAfter: 7 });
    const err = await strict.chat.postMessage({ channel: C, text: 'limited' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebAPIRateLimitedError);
    expect((err as WebAPIRateLimitedError).retryAfter).toBe(7);
    expect(fake.callsTo('chat.postMessage').at(-1)).toMatchObject({ status: 429, error: 'ratelimited' });
  });

  it('429 without rejectRateLimitedCalls: the client pauses its queue for Retry-After, then retries', async () => {
    const patient = new WebClient(CANARY_SLACK_BOT_TOKEN, {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 },
      logger: silentLogger,
    });
    let rateLimitedFor: number | undefined;
    patient.on(WebClientEvent.RATE_LIMITED, (sec: number) => (rateLimitedFor = sec));
    fake.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    const before = fake.callsTo('chat.postMessage').length;
    const started = Date.now();
    const r = await patient.chat.postMessage({ channel: C, text: 'after the pause' });
    expect(r.ok).toBe(true);
    expect(rateLimitedFor).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fake.callsTo('chat.postMessage').length).toBe(before + 2);
  });

  it('failNext 500 → WebAPIHTTPError; failNext error → WebAPIPlatformError; drop → WebAPIRequestError', async () => {
    fake.failNext('chat.update', { status: 500 });
    const e1 = await web.chat.update({ channel: C, ts: '1', text: 'x' }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(WebAPIHTTPError);
    expect((e1 as WebAPIHTTPError).statusCode).toBe(500);
    fake.failNext('*', { error: 'channel_not_found' });
    await expect(web.conversations.info({ channel: C })).rejects.toBeInstanceOf(WebAPIPlatformError);
    fake.failNext('auth.test', { drop: true });
    await expect(web.auth.test()).rejects.toBeInstanceOf(WebAPIRequestError);
    await expect(web.auth.test()).resolves.toMatchObject({ ok: true });
  });

  it('accepts JSON bodies and the token as a form field; unknown methods → unknown_method', async () => {
    const json = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CANARY_SLACK_BOT_TOKEN}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel: C, text: 'json body', unfurl_links: true }),
    }).then((r) => r.json());
    expect(json).toMatchObject({ ok: true, channel: C });
    expect(fake.callsTo('chat.postMessage').at(-1)).toMatchObject({ contentType: 'json', params: { unfurl_links: true } });
    const form = await fetch(`${fake.apiUrl}auth.test`, { method: 'POST', body: new URLSearchParams({ token: CANARY_SLACK_BOT_TOKEN }) }).then((r) => r.json());
    expect(form).toMatchObject({ ok: true });
    expect(fake.calls.at(-1)!.params).not.toHaveProperty('token');
    await expect(web.apiCall('nope.method')).rejects.toMatchObject({ data: { error: 'unknown_method' } });
  });

  it('waitFor resolves on the state change (no polling) and times out with a message', async () => {
    const waiting = fake.waitFor(() => fake.messages(C).find((m) => m.text === 'awaited'), 2000, 'the awaited message');
    await web.chat.postMessage({ channel: C, text: 'awaited' });
    expect((await waiting).text).toBe('awaited');
    await expect(fake.waitFor(() => false, 200, 'nothing')).rejects.toThrow(/timed out after 200 ms waiting for nothing/);
  });

  it('never writes tokens to the run log', () => {
    const log = readFileSync(runLogPath(), 'utf8');
    expect(log).toContain('[fake-slack]');
    expect(log).not.toContain(CANARY_SLACK_BOT_TOKEN);
    expect(log).not.toContain(CANARY_SLACK_APP_TOKEN);
    expect(log).not.toContain('xoxb-not-a-known-token');
  });
});
