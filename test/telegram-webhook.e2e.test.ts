import { describe, expect, it } from 'vitest';
import { CANARY_WEBHOOK_SECRET } from '@switchboard/testkit';
import { ALICE, texts, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

const HOOK_URL = 'https://bot.example/telegram/main';

const env = useTelegramEnv({
  mode: 'webhook',
  webhookSecret: CANARY_WEBHOOK_SECRET,
  webhookUrl: HOOK_URL,
  dmPolicy: 'allowlist',
  allowFrom: [String(ALICE.user.id)],
});

function post(body: unknown, secret?: string): Promise<Response> {
  return fetch(`${env.gw.url}/channels/telegram/main/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const update = (updateId: number, messageId: number, text: string) => ({
  update_id: updateId,
  message: { message_id: messageId, from: ALICE.user, chat: ALICE.dm, date: Math.floor(Date.now() / 1000), text },
});

describe('telegram: webhook mode', () => {
  it('registers the webhook with its secret at start', async () => {
    await env.tg.waitForAnswered('setWebhook');
    expect(env.tg.webhook(TOKEN)).toMatchObject({ url: HOOK_URL, secret_token: CANARY_WEBHOOK_SECRET });
  });

  it('a wrong or missing secret gets 401 and never reaches the model; bad bodies get 400', async () => {
    expect((await post(update(1, 1, 'intruder'), 'wrong-secret')).status).toBe(401);
    expect((await post(update(2, 2, 'intruder'))).status).toBe(401);
    expect((await post(update(3, 3, 'intruder'), `${CANARY_WEBHOOK_SECRET}x`)).status).toBe(401);
    expect((await post('{not json', 'wrong-secret')).status).toBe(401);
    expect((await post('{not json', CANARY_WEBHOOK_SECRET)).status).toBe(400);
    const bad = await post({ update_id: 'seven' }, CANARY_WEBHOOK_SECRET);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('bad_update');
    expect(env.model.requests).toHaveLength(0);
    expect(texts(env.tg, ALICE.dm.id)).toHaveLength(0);
  });

  it('acknowledges at once while the model is slow; the same update delivered twice is answered once', async () => {
    const { model, tg } = env;
    model.enqueue({ text: 'Webhook answer.', hold: true });
    const started = Date.now();
    const first = await post(update(10, 10, 'via webhook'), CANARY_WEBHOOK_SECRET);
    expect(first.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const again = await post(update(10, 10, 'via webhook'), CANARY_WEBHOOK_SECRET);
    expect(again.status).toBe(200);
    await model.waitForRequests(1);
    model.release();
    await waitForText(tg, ALICE.dm.id, 'Webhook answer.');
    // A later update proves the duplicate never queued a second turn (turns run in order).
    await post(update(11, 11, 'next one'), CANARY_WEBHOOK_SECRET);
    await waitForText(tg, ALICE.dm.id, 'echo: next one');
    expect(model.requests).toHaveLength(2);
    expect(texts(tg, ALICE.dm.id)).toEqual(['Webhook answer.', 'echo: next one']);
  });
});
