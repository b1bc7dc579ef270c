import { describe, expect, it } from 'vitest';
import { CANARY_WEBHOOK_SECRET } from '@switchboard/testkit';
import { ALICE, control, isFinal, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Webhook mode: Telegram redelivers an update answered 503; at limits.inboxMaxAttempts it is dead-lettered and answered 200.
const env = useTelegramEnv(
  { mode: 'webhook', webhookSecret: CANARY_WEBHOOK_SECRET, dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] },
  { limits: { inboxMaxBytes: 2048, inboxMaxAttempts: 3 } },
);

function post(body: unknown): Promise<Response> {
  return fetch(`${env.gw.url}/channels/telegram/main/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': CANARY_WEBHOOK_SECRET },
    body: JSON.stringify(body),
  });
}

const update = (updateId: number, messageId: number, text: string) => ({
  update_id: updateId,
  message: { message_id: messageId, from: ALICE.user, chat: ALICE.dm, date: Math.floor(Date.now() / 1000), text },
});

describe('telegram webhook: dead letters', () => {
  it('503 until the attempts run out, then 200 and a dead letter; a redelivery is skipped; the next update is answered', async () => {
    const { gw, tg, model } = env;
    await gw.waitForLog(/"event":"telegram_bot"/);
    const big = update(500, 50, `huge ${'y'.repeat(4000)}`);
    expect((await post(big)).status).toBe(503);
    expect((await post(big)).status).toBe(503);
    expect((await post(big)).status).toBe(200);
    await waitForText(tg, ALICE.dm.id, 'could not process your last message', 15_000);
    // Delivered once more (Telegram lost the 200): recognised, nothing new.
    expect((await post(big)).status).toBe(200);
    const list = (await control(gw, 'GET', '/inbox/dead-letters?channel=telegram:main')).json;
    expect(list.total).toBe(1);
    expect(list.deadLetters[0]).toMatchObject({ dedupeKey: '500', attempts: 3, sender: `telegram:${ALICE.user.id}` });
    model.enqueue({ text: 'Small things work.' });
    expect((await post(update(501, 51, 'small'))).status).toBe(200);
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000);
  });
});
