import { describe, expect, it } from 'vitest';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// Ids that name properties every plain object inherits: looked up in a record keyed by outside
// input without an own-property check, they find Object.prototype's members instead of nothing.
const HOSTILE_IDS = ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf'];

const env = useWebhookGateway({
  main: { dmPolicy: 'allowlist', allowFrom: ['alice'], groupPolicy: 'allowlist', groups: { 'room-1': { requireMention: false } } },
  open: { dmPolicy: 'allowlist', allowFrom: ['alice'], groupPolicy: 'open', requireMention: false },
});

describe('room and sender ids that name Object.prototype members', () => {
  it('answers a room message from such a room with a normal refusal, never a 500, and the gateway stays up', async () => {
    const { gw, platform } = env;
    for (const [i, id] of HOSTILE_IDS.entries()) {
      const res = await platform.send(gw, {
        id: `hostile-room-${i}`,
        sender: { id: 'alice' },
        conversation: { id, kind: 'room' },
        text: `hello from room ${id}`,
        mentioned: true,
      });
      expect(res.status, `room ${id}: ${res.text}`).toBe(202);
      expect(res.json.gate, `room ${id}`).toBe('ignored');
    }
    // A configured room is still answered afterwards.
    const ok = await platform.send(gw, { id: 'room-ok', sender: { id: 'alice' }, conversation: { id: 'room-1', kind: 'room' }, text: 'still there?' });
    expect(ok.status).toBe(202);
    expect(ok.json.gate).toBe('admitted');
    expect((await platform.waitFor(replyTo('room-ok'))).body).toMatchObject({ text: 'echo: still there?' });
  });

  it('in an open account answers rooms with such ids like any other room, each its own conversation', async () => {
    const { gw } = env;
    const platform = env.platforms.open!;
    for (const [i, id] of HOSTILE_IDS.entries()) {
      const res = await platform.send(gw, { id: `open-room-${i}`, sender: { id: 'alice' }, conversation: { id, kind: 'room' }, text: `open ${id}` });
      expect(res.status, `room ${id}: ${res.text}`).toBe(202);
      expect(res.json.gate, `room ${id}`).toBe('admitted');
      const reply = await platform.waitFor(replyTo(`open-room-${i}`));
      expect(reply.body).toMatchObject({ text: `echo: open ${id}`, conversation: { id, kind: 'room' } });
    }
  });

  it('treats such sender ids as strangers in DMs and threads, never a 500', async () => {
    const { gw, platform } = env;
    for (const [i, id] of HOSTILE_IDS.entries()) {
      const dm = await platform.send(gw, { id: `hostile-dm-${i}`, sender: { id }, conversation: { id: `dm-${id}`, kind: 'dm' }, text: 'hi' });
      expect(dm.status, `sender ${id}: ${dm.text}`).toBe(202);
      expect(dm.json.gate, `sender ${id}`).not.toBe('admitted');
      const thread = await platform.send(gw, {
        id: `hostile-thread-${i}`,
        sender: { id: 'alice' },
        conversation: { id: 'room-1', kind: 'room', thread: id },
        text: `thread ${id}`,
      });
      expect(thread.status, `thread ${id}: ${thread.text}`).toBe(202);
    }
    const health = await fetch(`${gw.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
