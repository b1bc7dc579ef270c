import { describe, expect, it } from 'vitest';
import { ALL_CANARIES, type FakeAnthropic } from '@switchboard/testkit';
import { socketAccount, useSlackEnv, waitForMessage } from './slack-helpers.js';
import { ALICE, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Issue 13 acceptance 8 (`/context` on Telegram and Slack): the size of the session's next request
// against the model's window (W = contextWindow − outputReserve from `models.<name>`), the last
// compaction ("never" here) and what fills the request, largest first — without a model call.

// The `minimal` profile keeps the tool schemas (a handful of tools) below one long message of history.
const MODELS = { models: { 'claude-test': { contextWindow: 50_000, outputReserve: 5_000 } }, agents: { default: { tools: { profile: 'minimal' } } } };

/** About 3,800 characters of distinct words (under Telegram’s 4,096): the history then outweighs the system prompt and the tool schemas. */
const LONG = Array.from({ length: 480 }, (_, i) => `word${i}`).join(' ');

/** The tokens the fake counted for its last request (the whole input: uncached, cache writes and cache reads). */
function lastCounted(model: FakeAnthropic): number {
  const u = model.requests.at(-1)!.usage!;
  return u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
}

const num = (s: string) => Number(s.replaceAll(',', ''));

/** The consumers a reply lists, in its order, as [label, tokens]. */
function consumersOf(text: string, line: RegExp): Array<[string, number]> {
  return [...text.matchAll(line)].map((m) => [m[1]!, num(m[2]!)]);
}

/** What both channels show, checked against the fake's own count of the request before. */
function checkReport(text: string, model: FakeAnthropic, consumers: Array<[string, number]>) {
  const m = /Context[:*]? ([\d,]+) of 45,000 tokens \((\d+\.\d)%\) · model `?claude-test`?/.exec(text);
  expect(m, text).not.toBeNull();
  const tokens = num(m![1]!);
  expect(Number(m![2])).toBeCloseTo((100 * tokens) / 45_000, 1);
  expect(text).toContain('Window: 50,000 tokens, 5,000 kept for the answer');
  expect(text).toContain('Last compaction: never');
  // The next request holds everything the last one sent plus the answer to it (as long again).
  const before = lastCounted(model);
  expect(tokens).toBeGreaterThan(before);
  expect(tokens).toBeLessThan(before * 2);
  expect(consumers.map(([label]) => label)).toEqual(expect.arrayContaining(['history', 'system prompt', 'tool schemas']));
  expect(consumers[0]![0]).toBe('history');
  const counts = consumers.map(([, n]) => n);
  expect(counts).toEqual([...counts].sort((a, b) => b - a));
  // Each consumer is rounded up on its own: together they are the total, give or take that rounding.
  const sum = counts.reduce((a, b) => a + b, 0);
  expect(Math.abs(sum - tokens)).toBeLessThanOrEqual(consumers.length);
  for (const c of ALL_CANARIES) expect(text).not.toContain(c);
}

describe('/context on Telegram', () => {
  const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] }, MODELS);

  it('shows the next request against the window, the last compaction and the consumers, without a model call', async () => {
    const { tg, model, gw } = env;
    const say = (text: string) => tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text });
    say(LONG);
    await waitForText(tg, ALICE.dm.id, 'echo: word0 word1');
    // The answer is out before the turn's end (its entries) is stored: `/context` reports what is stored.
    await gw.waitForLog((l) => l.includes('turn finished'));
    const calls = model.requests.length;
    say('/context');
    const text = String(params(await waitForText(tg, ALICE.dm.id, 'Context:')).text);
    checkReport(text, model, consumersOf(text, /^ {2}([a-z ]+): ([\d,]+)$/gm));
    expect(model.requests.length).toBe(calls);
  });
});

describe('/context on Slack', () => {
  const env = useSlackEnv({ account: (slack) => socketAccount(slack), config: MODELS });

  it('answers /switchboard context ephemerally with the same report', async () => {
    const { slack, model, gw } = env;
    await gw.waitForLog((l) => l.includes('slack socket connected'));
    const im = slack.identity.imChannelId;
    await slack.socketSend(slack.events.im({ text: LONG }));
    await waitForMessage(slack, im, 'echo: word0 word1');
    await gw.waitForLog((l) => l.includes('turn finished'));
    const calls = model.requests.length;
    const ack = await slack.socketSendSlashCommand(slack.events.slashCommand({ command: '/switchboard', text: 'context', channel: im }));
    const payload = ack.payload as { response_type: string; text: string };
    expect(payload.response_type).toBe('ephemeral');
    const line = /Top consumers: (.*)$/m.exec(payload.text)?.[1] ?? '';
    const consumers = consumersOf(line, /([a-z ]+?) ([\d,]+)(?: · |$)/g);
    checkReport(payload.text, model, consumers);
    expect(model.requests.length).toBe(calls);
  });
});
