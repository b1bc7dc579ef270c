import { describe, expect, it } from 'vitest';
import { linkedPrincipal } from './principal-helpers.js';
import { ALICE, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';
import { alive, execCall, execLog, execWorkspace, processTree, SignalFifo } from './exec-helpers.js';

// Acceptance 6 of issue 14 over Telegram: `/stop` mid-run kills the command's whole process tree.
// Alice is linked to an owner principal (exec is offered to owners) running in bypassPermissions,
// so the command runs without an approval.
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] },
  { agents: { default: { mode: 'bypassPermissions' } }, tools: { exec: { killGrace: '500ms' } } },
);

const say = (text: string) => env.tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text });

describe('exec: Telegram /stop (acceptance 6)', () => {
  it('/stop mid-run leaves no process of the command behind', async () => {
    const { tg, model, gw } = env;
    const aliceId = await linkedPrincipal(gw, 'alice', 'owner', 'telegram', String(ALICE.user.id));
    const ready = new SignalFifo(execWorkspace(gw, aliceId), 'ready.fifo');
    try {
      const since = tg.calls.length;
      model.enqueue(execCall('toolu_tgstop', 'sleep 300 & sleep 300 & echo ready > ready.fifo; wait'));
      say('run the long command');
      const pid = (await execLog(gw, 'exec started', 'toolu_tgstop')).pid as number;
      // written after both sleeps were forked
      await ready.waitFor('ready');
      const tree = processTree(pid);
      expect(tree.length).toBeGreaterThanOrEqual(4);
      expect(alive(tree)).toEqual(tree);
      say('/stop');
      await waitForText(tg, ALICE.dm.id, 'Stopped the running answer.', 15_000, since);
      const finished = await execLog(gw, 'exec finished', 'toolu_tgstop');
      expect(finished.pid).toBe(pid);
      expect(alive(tree)).toEqual([]);
    } finally {
      ready.close();
    }
  });
});
