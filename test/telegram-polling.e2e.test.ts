import { describe, expect, it } from 'vitest';
import { ALICE, eventually, params, readyHealth, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Only the timers under test are shortened: a 1 s long poll and a 6 s stall watchdog.
const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], pollTimeout: '1s', pollStallTimeout: '6s' });

describe('telegram: polling liveness', () => {
  it('a stalled getUpdates is aborted by the watchdog and replaced; down meanwhile, despite outbound traffic; nothing lost', async () => {
    const { tg, model, gw } = env;
    await eventually(async () => ((await readyHealth(gw)).state === 'up' ? true : undefined));
    // A turn is streaming while polling stalls: its sends and edits are outbound traffic.
    model.enqueue({ text: 'A slow answer that keeps the bot busy sending.', holdAfterEvents: 5 });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'first' });
    await tg.waitForAnswered((c) => c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id, 15_000);
    const mark = tg.events.length;
    tg.stallPolling(TOKEN);
    const stalled = await tg.waitForStalledPoll(TOKEN, 10_000, mark);
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'second, sent during the stall' });

    const down = await eventually(async () => {
      const h = await readyHealth(gw);
      return h.state === 'down' ? h : undefined;
    }, 10_000);
    expect(down.detail).toMatch(/stalled/);
    const sendsBefore = tg.calls.length;
    model.release();
    await waitForText(tg, ALICE.dm.id, 'A slow answer that keeps the bot busy sending.', 10_000);
    expect(tg.calls.length).toBeGreaterThan(sendsBefore);
    // The outbound calls did not make the channel look alive: it is down until a poll completes.
    const afterSends = await readyHealth(gw);
    const restarted = tg.events.some((e) => e.type === 'stalled-poll-closed' && e.call === stalled.call);
    expect(afterSends.state === 'down' || restarted).toBe(true);

    const closed = await tg.waitForClosedStalledPoll(TOKEN, 10_000, mark);
    expect(closed.call).toBe(stalled.call);
    await tg.waitForEvent((e) => e.type === 'poll-started' && e.seq > closed.seq, 10_000);
    await waitForText(tg, ALICE.dm.id, 'echo: second, sent during the stall', 15_000);
    await eventually(async () => ((await readyHealth(gw)).state === 'up' ? true : undefined));
    expect(gw.logs().some((l) => l.includes('telegram_poll_stalled'))).toBe(true);
  });

  it('409 (another poller) is reported as down with the reason, retried with backoff, then recovers', async () => {
    const { tg, gw } = env;
    const since = tg.calls.length;
    tg.failNext('getUpdates', { status: 409 }, { times: 2 });
    const down = await eventually(async () => {
      const h = await readyHealth(gw);
      return h.state === 'down' && h.detail?.includes('409') ? h : undefined;
    }, 15_000);
    expect(down.detail).toMatch(/another poller or a webhook/);
    await eventually(async () => ((await readyHealth(gw)).state === 'up' ? true : undefined), 15_000);
    const conflicts = tg.calls.filter((c) => c.seq > since && c.method === 'getUpdates' && c.status === 409);
    expect(conflicts).toHaveLength(2);
    expect(conflicts[1]!.at.getTime() - conflicts[0]!.at.getTime()).toBeGreaterThanOrEqual(900);
    expect(gw.logs().some((l) => l.includes('telegram_poll_conflict'))).toBe(true);
    const channels = (await (await fetch(`${gw.url}/api/v1/channels`, { headers: { authorization: `Bearer ${gw.credentials().operatorToken}` } })).json()) as {
      channels: Array<{ id: string; health: { state: string } }>;
    };
    expect(channels.channels.find((c) => c.id === 'telegram:main')!.health.state).toBe('up');
  });

  it('a network failure of getUpdates backs off, shows degraded and is logged without the bot token', async () => {
    const { tg, gw } = env;
    const since = tg.calls.length;
    tg.failNext('getUpdates', { drop: true });
    const line = await gw.waitForLog((l) => l.includes('telegram_poll_failed'), 15_000);
    expect(line).not.toContain(TOKEN);
    expect(line).not.toContain(TOKEN.split(':')[1]!);
    await eventually(async () => ((await readyHealth(gw)).state === 'up' ? true : undefined), 15_000);
    const polls = tg.calls.filter((c) => c.seq > since && c.method === 'getUpdates');
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(polls[1]!.at.getTime() - polls[0]!.at.getTime()).toBeGreaterThanOrEqual(900);
  });
});
