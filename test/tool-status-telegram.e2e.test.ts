import { describe, expect, it } from 'vitest';
import { GateFifo, execCall, execWorkspace } from './exec-helpers.js';
import { linkedPrincipal } from './principal-helpers.js';
import { ALICE, TOKEN, isFinal, params, useTelegramEnv } from './telegram-helpers.js';

// Issue 15, acceptance 6 over Telegram: while a tool runs the draft shows its status line
// (`🔧 exec echo one…`, the exec progress, then `✅`), and the final answer replaces the draft
// without any status line. Alice is an owner (exec is offered to owners) in bypassPermissions.
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] },
  { agents: { default: { mode: 'bypassPermissions' } }, tools: { exec: { progressInterval: '200ms' } } },
);

/** An answered plain-text draft send or edit in Alice's chat whose text passes `test`. */
const draftWith = (test: (text: string) => boolean, since: number) =>
  env.tg.waitForAnswered(
    (c) =>
      (c.method === 'sendMessage' || c.method === 'editMessageText') &&
      params(c).chat_id === ALICE.dm.id &&
      params(c).parse_mode === undefined &&
      c.status === 200 &&
      test(String(params(c).text)),
    20_000,
    since,
  );

describe('tool progress in Telegram drafts (issue 15, acceptance 6)', () => {
  it('a running exec shows 🔧 with its progress in the draft, then ✅; the final answer carries no status line', async () => {
    const { tg, model, gw } = env;
    const aliceId = await linkedPrincipal(gw, 'alice', 'owner', 'telegram', String(ALICE.user.id));
    const gate = new GateFifo(execWorkspace(gw, aliceId), 'gate.fifo');
    try {
      const since = tg.calls.length;
      // The answer after the tool waits (hold) until the test saw the finished status line.
      model.enqueue(execCall('toolu_tgstatus', 'echo one; echo two; read line < gate.fifo; echo done'), { text: 'All **done**.', hold: true });
      tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'run the checks' });

      const running = await draftWith((t) => t.includes('🔧 exec echo one…'), since);
      expect(String(params(running).text)).not.toContain('read line');
      // The exec progress reports reach the same draft (coalesced into its throttled edits).
      const progress = await draftWith((t) => /🔧 exec echo one… · \d+ lines? so far/.test(t), since);
      expect(String(params(progress).text)).toMatch(/2 lines so far/);
      gate.release();
      await draftWith((t) => t.includes('✅ exec echo one'), since);
      model.release();

      const final = await tg.waitForAnswered(isFinal(ALICE.dm.id), 20_000, since);
      const msgs = tg.sent(TOKEN, ALICE.dm.id).filter((m) => m.text === 'All done.');
      expect(msgs).toHaveLength(1);
      const answer = msgs[0]!;
      // The draft itself became the answer: its earlier versions held the status lines, the last one does not.
      expect(final.method).toBe('editMessageText');
      expect(answer.history.some((v) => (v.text ?? '').includes('🔧 exec echo one…'))).toBe(true);
      expect(answer.text).toBe('All done.');
      for (const bad of ['🔧', '✅', '❌', 'exec echo']) expect(answer.text).not.toContain(bad);
      expect(String(params(final).text)).not.toMatch(/🔧|✅|exec echo/);
    } finally {
      gate.close();
    }
  });
});
