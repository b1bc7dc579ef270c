import { beforeAll, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import { isSummaryRequest, summaryHandler } from '@switchboard/testkit';
import { linkedPrincipal } from './principal-helpers.js';
import { ALICE, BOB, control, GROUP, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Issue 13, acceptance 8 for `/compact` on Telegram (DM and a shared group), and the control API's
// POST /api/v1/sessions/{id}/compact.
const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], groups: { [String(GROUP.id)]: { requireMention: false } } });

const say = (chat: { id: number; type: string }, text: string, from = ALICE) =>
  env.tg.sendUserMessage(TOKEN, { chat: chat as typeof GROUP, from: from.user, text });

/** The two token counts of a `/compact` reply's "about N → M tokens", asserting it shrank. */
function shrank(reply: string): { before: number; after: number } {
  const m = /about ([\d,]+) → ([\d,]+) tokens/.exec(reply);
  expect(m, reply).not.toBeNull();
  const before = Number(m![1]!.replaceAll(',', ''));
  const after = Number(m![2]!.replaceAll(',', ''));
  expect(before).toBeGreaterThan(0);
  expect(after).toBeLessThan(before);
  return { before, after };
}

/** Bulk for the history's messages, so that a summary of them is smaller than they are (the reply's "before → after" shrinks). */
const FILLER = ` ${'and some more words '.repeat(40)}`;

type Entry = { seq: number; kind: string; payload: Record<string, unknown> };
async function sessionOf(chatKey: string): Promise<{ id: string; entries: Entry[] }> {
  const { sessions } = (await control(env.gw, 'GET', '/sessions?channel=telegram')).json as {
    sessions: Array<{ id: string; key: string; endedAt: string | null }>;
  };
  const s = sessions.find((x) => x.key.includes(chatKey) && x.endedAt === null)!;
  return { id: s.id, entries: ((await control(env.gw, 'GET', `/sessions/${s.id}/transcript`)).json as { entries: Entry[] }).entries };
}

let aliceDm = '';
let bobDm = '';
beforeAll(async () => {
  aliceDm = `dm:${await linkedPrincipal(env.gw, 'alice', 'member', 'telegram', String(ALICE.user.id))}`;
  bobDm = `dm:${await linkedPrincipal(env.gw, 'bob', 'admin', 'telegram', String(BOB.user.id))}`;
  env.model.setHandler(summaryHandler({ text: 'SUMMARY: Alice greeted the assistant three times.' }));
});

describe('telegram: /compact', () => {
  it('in a DM: summarizes the history with the person’s instructions, and the next request starts from the summary', async () => {
    const { tg, model } = env;
    for (let n = 1; n <= 3; n++) {
      say(ALICE.dm, `hello number ${n}${FILLER}`);
      await waitForText(tg, ALICE.dm.id, `echo: hello number ${n}`);
    }
    const before = model.requests.length;
    say(ALICE.dm, '/compact keep the greetings');
    const reply = String(params(await waitForText(tg, ALICE.dm.id, 'Compacted the conversation')).text);
    expect(reply).toMatch(/about \d+ → \d+ tokens/);
    shrank(reply);
    const calls = model.requests.slice(before);
    expect(calls).toHaveLength(1);
    expect(isSummaryRequest(calls[0]!)).toBe(true);
    expect(JSON.stringify(calls[0]!.body.messages)).toContain('keep the greetings');
    expect(JSON.stringify(calls[0]!.body.messages)).toContain('hello number 1');

    say(ALICE.dm, 'after the compaction');
    await waitForText(tg, ALICE.dm.id, 'echo: after the compaction');
    const first = model.requests.at(-1)!.body.messages![0]!.content as Array<{ text?: string }>;
    expect(String(first[0]!.text).startsWith(`${SUMMARY_PREFIX}\n\nSUMMARY: Alice greeted`)).toBe(true);
    const { id, entries } = await sessionOf(aliceDm);
    const boundary = entries.find((e) => e.kind === 'compact')!;
    expect(boundary.payload).toMatchObject({ trigger: 'manual', instructions: 'keep the greetings' });
    // The history before the boundary is still in the transcript (turn 1 is what it summarized).
    const hellos = entries.filter((e) => e.kind === 'user' && JSON.stringify(e.payload).includes('hello number'));
    expect(hellos).toHaveLength(3);
    expect(hellos[0]!.seq).toBeLessThanOrEqual(boundary.payload.throughSeq as number);
    expect(hellos[1]!.seq).toBeGreaterThan(boundary.payload.throughSeq as number);
    const audit = (await control(env.gw, 'GET', '/audit?action=session.compact')).json as { entries: Array<{ target: string; actor: string }> };
    expect(audit.entries.some((a) => a.target === id && a.actor.startsWith('principal:'))).toBe(true);
  });

  it('in a shared group: a member is refused, an admin compacts', async () => {
    const { tg, model } = env;
    for (let n = 1; n <= 3; n++) {
      say(GROUP, `room message ${n}${FILLER}`);
      await waitForText(tg, GROUP.id, `echo: room message ${n}`);
    }
    const beforeRefusal = model.requests.length;
    say(GROUP, '/compact');
    await waitForText(tg, GROUP.id, 'Not compacted: in a shared conversation, only owners and admins can compact it.');
    // The member's refused /compact made no summary call (no model request at all).
    expect(model.requests.length).toBe(beforeRefusal);
    say(GROUP, '/compact', BOB);
    const reply = String(params(await waitForText(tg, GROUP.id, 'Compacted the conversation')).text);
    shrank(reply);
    const calls = model.requests.slice(beforeRefusal);
    expect(calls).toHaveLength(1);
    expect(isSummaryRequest(calls[0]!)).toBe(true);
  });

  it('with too little history: says so and changes nothing', async () => {
    const { tg, model } = env;
    const before = model.requests.length;
    say(BOB.dm, '/compact', BOB);
    await waitForText(tg, BOB.dm.id, 'Not compacted: the conversation is still short.');
    // No model request (no summary call) and no compact entry in Bob's DM session, if it has one.
    expect(model.requests.length).toBe(before);
    const { sessions } = (await control(env.gw, 'GET', '/sessions?channel=telegram')).json as { sessions: Array<{ id: string; key: string }> };
    for (const s of sessions.filter((x) => x.key.includes(bobDm))) {
      const { entries } = (await control(env.gw, 'GET', `/sessions/${s.id}/transcript`)).json as { entries: Entry[] };
      expect(entries.filter((e) => e.kind === 'compact')).toEqual([]);
    }
  });
});

describe('control API: POST /api/v1/sessions/{id}/compact', () => {
  it('compacts (audited), answers 404 for an unknown session and 409 while a turn runs', async () => {
    const { tg, model, gw } = env;
    say(ALICE.dm, 'one more message');
    await waitForText(tg, ALICE.dm.id, 'echo: one more message');
    const { id, entries } = await sessionOf(aliceDm);
    const res = await control(gw, 'POST', `/sessions/${id}/compact`, { instructions: 'operator run' });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      sessionId: id,
      compacted: { throughSeq: expect.any(Number), tokensBefore: expect.any(Number), tokensAfter: expect.any(Number) },
    });
    expect(res.json.compacted.tokensAfter).toBeLessThan(res.json.compacted.tokensBefore);
    const after = (await sessionOf(aliceDm)).entries;
    expect(after.slice(0, entries.length)).toEqual(entries);
    expect(after.at(-1)).toMatchObject({ kind: 'compact', payload: { trigger: 'manual', instructions: 'operator run' } });
    const audit = (await control(gw, 'GET', '/audit?action=session.compact')).json as { entries: Array<{ target: string; actor: string }> };
    expect(audit.entries.some((a) => a.target === id && a.actor.startsWith('operator:'))).toBe(true);

    expect((await control(gw, 'POST', '/sessions/nope/compact', {})).status).toBe(404);
    expect((await control(gw, 'POST', `/sessions/${id}/compact`, { instructions: 42 })).status).toBe(400);

    model.enqueue({ text: 'a slow answer', hold: true });
    say(ALICE.dm, 'hold this turn');
    await model.waitForHeld(1);
    const busy = await control(gw, 'POST', `/sessions/${id}/compact`, {});
    expect(busy.status).toBe(409);
    expect(busy.json).toMatchObject({ code: 'session_busy' });
    model.release();
    await waitForText(tg, ALICE.dm.id, 'a slow answer');
  });
});
