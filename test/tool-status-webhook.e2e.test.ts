import { describe, expect, it } from 'vitest';
import type { ReceivedCallback } from '@switchboard/testkit';
import { GateFifo, execCall, execWorkspace } from './exec-helpers.js';
import { linkedPrincipal } from './principal-helpers.js';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// Issue 15: the webhook channel's callbacks carry `tool` events (start, coalesced progress, end)
// with the same scrubbed summary the chat drafts show; the reply never carries status lines.
const env = useWebhookGateway(
  { main: { dmPolicy: 'allowlist', allowFrom: ['alice'] } },
  { agents: { default: { mode: 'bypassPermissions' } }, tools: { exec: { progressInterval: '200ms' } } },
);

const toolEvent = (toolUseId: string, phase: string) => (c: ReceivedCallback) =>
  c.body.type === 'tool' && c.body.toolUseId === toolUseId && c.body.phase === phase;

describe('tool events in webhook callbacks (issue 15)', () => {
  it('a turn with an exec call sends tool start, progress and end callbacks before the reply, signed and with a scrubbed summary', async () => {
    const { platform, fake, gw } = env;
    const ownerId = await linkedPrincipal(gw, 'alice', 'owner', 'webhook', 'alice');
    const gate = new GateFifo(execWorkspace(gw, ownerId), 'gate.fifo');
    try {
      fake.enqueue(execCall('toolu_whstatus', 'TOKEN=hunter2hunter2 echo one; echo two; read line < gate.fifo'), { text: 'All done.' });
      const m = platform.dm('alice', 'run the checks');
      const accepted = (await platform.send(gw, m)).json;

      const start = await platform.waitFor(toolEvent('toolu_whstatus', 'start'));
      expect(start.body).toEqual({
        type: 'tool',
        id: `${accepted.turnId}:tool:toolu_whstatus:start`,
        account: 'main',
        conversation: m.conversation,
        turnId: accepted.turnId,
        replyTo: m.id,
        toolUseId: 'toolu_whstatus',
        name: 'exec',
        phase: 'start',
        // the leading assignment (it may carry a secret) is not shown, nor anything after the `;`
        summary: 'echo one',
      });
      expect(start.verified).toBe(true);
      const progress = await platform.waitFor((c) => toolEvent('toolu_whstatus', 'progress')(c) && c.body.lines === 2);
      expect(progress.body).toMatchObject({ name: 'exec', summary: 'echo one', lines: 2 });
      expect(progress.body.message).toMatch(/^2 lines so far, /);
      expect(typeof progress.body.elapsedMs).toBe('number');
      gate.release();
      const end = await platform.waitFor(toolEvent('toolu_whstatus', 'end'));
      expect(end.body).toMatchObject({ id: `${accepted.turnId}:tool:toolu_whstatus:end`, phase: 'end', summary: 'echo one' });
      expect(end.body.isError).toBeUndefined();
      const reply = await platform.waitFor(replyTo(m.id));
      expect(reply.body.text).toBe('All done.');

      const mine = platform.callbacks.filter((c) => c.body.turnId === accepted.turnId);
      const order = mine.map((c) => (c.body.type === 'tool' ? `tool:${c.body.phase}` : c.body.type));
      expect(order[0]).toBe('tool:start');
      expect(order.at(-1)).toBe('reply');
      expect(order.at(-2)).toBe('tool:end');
      expect(order.slice(1, -2).every((o) => o === 'tool:progress')).toBe(true);
      // Progress ids are unique per callback; no callback repeats the planted value.
      const ids = mine.map((c) => c.body.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(mine.some((c) => c.rawBody.includes('hunter2'))).toBe(false);
    } finally {
      gate.close();
    }
  });
});
