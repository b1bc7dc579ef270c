import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALICE, BOT_USERNAME, control, isFinal, params, storedOffset, texts, TOKEN, useTelegramEnv } from './telegram-helpers.js';

const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] });

describe('telegram: direct messages', () => {
  it('answers an allowlisted DM: typing, a streamed draft edited, then the final; transcript stored', async () => {
    const { tg, model, gw } = env;
    await tg.waitFor('setMyCommands');
    expect(tg.commands(TOKEN)?.map((c) => (c as { command: string }).command)).toEqual([
      'new',
      'status',
      'stop',
      'mode',
      'compact',
      'context',
      'usage',
      'memory',
      'profile',
    ]);
    const answer = 'Here is a **streamed** answer with `code` and a link https://example.com in several pieces of text.';
    // Hold the stream after a few text deltas: the draft must appear while the model is still talking.
    model.enqueue({ text: answer, holdAfterEvents: 5 });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'hello there' });
    const draft = await tg.waitForAnswered((c) => c.method === 'sendMessage' && params(c).chat_id === ALICE.dm.id, 15_000);
    expect(params(draft).parse_mode).toBeUndefined();
    expect(answer.startsWith(String(params(draft).text))).toBe(true);
    expect(String(params(draft).text).length).toBeLessThan(answer.length);
    model.release();
    const final = await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000);
    expect(tg.chatActions(TOKEN, ALICE.dm.id).length).toBeGreaterThan(0);
    expect(tg.chatActions(TOKEN, ALICE.dm.id)[0]!.action).toBe('typing');
    // The plain-text draft was edited into the formatted final: one message in the chat.
    expect(final.method).toBe('editMessageText');
    const msgs = tg.sent(TOKEN, ALICE.dm.id);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.text).toBe(answer.replace(/\*\*|`/g, ''));
    expect(msgs[0]!.entities?.map((e) => e.type)).toEqual(expect.arrayContaining(['bold', 'code']));
    expect(msgs[0]!.link_preview_options).toEqual({ is_disabled: true });
    expect(msgs[0]!.history.length).toBeGreaterThanOrEqual(2);
    // The model saw the person's text as user content.
    const body = model.requests.at(-1)!.body;
    expect(JSON.stringify(body.messages)).toContain('hello there');
    const sessions = (await control(gw, 'GET', '/sessions?channel=telegram')).json.sessions as Array<{ id: string }>;
    expect(sessions).toHaveLength(1);
    const transcript = (await control(gw, 'GET', `/sessions/${sessions[0]!.id}/transcript`)).json.entries as Array<{ kind: string }>;
    expect(transcript.map((e) => e.kind)).toEqual(['user', 'assistant']);
    expect(texts(tg, ALICE.dm.id)).toHaveLength(1);
    expect(BOT_USERNAME).toBe(tg.botInfo(TOKEN).username);
  });

  it('persists the update offset and shuts down promptly on SIGTERM despite an open long poll', async () => {
    const { tg, gw } = env;
    const lastUpdate = Math.max(
      ...tg.calls.filter((c) => c.method === 'getUpdates').flatMap((c) => ((c.response?.result ?? []) as Array<{ update_id: number }>).map((u) => u.update_id)),
    );
    // The offset is a cursor row in the database (DESIGN §5); no offset file is written any more.
    expect(await storedOffset(gw)).toBe(String(lastUpdate + 1));
    expect(existsSync(join(gw.dataDir, 'telegram-main.offset'))).toBe(false);
    const open = await tg.waitForEvent((e) => e.type === 'poll-started' && /timeout=30/.test(e.detail ?? ''));
    const started = Date.now();
    const info = await gw.stop();
    expect(info.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(tg.events.some((e) => e.type === 'poll-closed' && e.call === open.call) || tg.calls.find((c) => c.seq === open.call)?.response !== undefined).toBe(
      true,
    );
  });
});
