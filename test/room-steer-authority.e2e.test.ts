import { beforeAll, describe, expect, it } from 'vitest';
import { api, type RecordedRequest } from '@switchboard/testkit';
import { linkedPrincipal, workspaceFiles } from './principal-helpers.js';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// The owner runs in bypassPermissions (agent mode; the owner's ceiling allows it); a guest's
// ceiling is `default`, so every write a guest's message leads to must be asked.
const env = useWebhookGateway(
  { main: { dmPolicy: 'allowlist', queueMode: 'steer', groups: { 'room-s': { requireMention: false } } } },
  { agents: { default: { mode: 'bypassPermissions' } } },
);

const room = (id: string, sender: string, text: string) => ({ id, sender: { id: sender }, conversation: { id: 'room-s', kind: 'room' as const }, text });
const saw = (req: RecordedRequest) => JSON.stringify(req.body.messages);

beforeAll(async () => {
  await linkedPrincipal(env.gw, 'olivia', 'owner');
  await linkedPrincipal(env.gw, 'gus', 'guest');
});

describe('steer mode in a room', () => {
  it("a guest's message never joins the owner's running turn: it is answered as its own turn, with the guest's authority", async () => {
    const { fake, gw, platform } = env;
    fake.setHandler((req) => {
      const msgs = req.body.messages ?? [];
      const all = saw(req);
      if (JSON.stringify(msgs.at(-1)).includes('owner starts a task'))
        return { hold: true, toolUses: [{ name: 'list_files', input: {}, id: 'toolu_owner_ls' }] };
      if (all.includes('guest wants a file') && !all.includes('toolu_guest_w')) {
        return { toolUses: [{ name: 'write_file', input: { path: 'guest.txt', content: 'written for the guest' }, id: 'toolu_guest_w' }] };
      }
      return { text: all.includes('toolu_guest_w') ? 'guest turn done' : 'owner turn done' };
    });
    try {
      expect((await platform.send(gw, room('o1', 'olivia', 'owner starts a task'))).json.gate).toBe('admitted');
      await fake.waitForHeld();
      try {
        // Accepted (in the inbox) while the owner's turn is held at its first model call.
        expect((await platform.send(gw, room('g1', 'gus', 'guest wants a file'))).json.gate).toBe('admitted');
      } finally {
        fake.release();
      }
      // The owner's turn ends without ever seeing the guest's message.
      const ownerReply = await platform.waitFor(replyTo('o1'));
      expect(ownerReply.body.text).toBe('owner turn done');
      expect(workspaceFiles(gw, 'guest.txt')).toEqual([]);
      // The guest's message is its own turn; its write_file is decided by the guest's mode: asked.
      const ask = await platform.waitFor((c) => c.body.type === 'approval_request' && c.body.tool === 'write_file');
      expect(ask.body.replyTo).toBe('g1');
      expect(workspaceFiles(gw, 'guest.txt')).toEqual([]);
      const decided = await platform.decide(gw, ask.body.approvalId as string, { decision: 'deny', senderId: 'olivia' });
      expect(decided.status).toBe(200);
      const guestReply = await platform.waitFor(replyTo('g1'));
      expect(guestReply.body.text).toBe('guest turn done');
      expect(workspaceFiles(gw, 'guest.txt')).toEqual([]);
      // The audit names the mode each decision was made in.
      const audit = await api(gw, 'GET', '/api/v1/audit?action=permission.decision', { token: gw.credentials().operatorToken });
      const write = (audit.json.entries as Array<{ detail: { tool: string; mode: string } }>).find((e) => e.detail.tool === 'write_file');
      expect(write?.detail.mode).toBe('default');
    } finally {
      fake.setHandler(undefined);
    }
  });
});
