import { describe, expect, it } from 'vitest';
import { dmKey, inbound } from './contract/fixtures.js';
import { engines } from './engines.js';

const letter = (dedupeKey: string, over: Record<string, unknown> = {}) => ({
  channel: 'websocket',
  account: 'default',
  dedupeKey,
  conversation: 'conv-1',
  sender: 'ws:tok-1',
  summary: 'message: hello',
  error: 'over limits.inboxMaxBytes',
  attempts: 3,
  receivedAt: new Date(1_000),
  ...over,
});

describe.each(engines())('dead letters (%s)', (_name, engine) => {
  it('records, lists newest first, counts; a redelivered item is recognised as seen', async () => {
    const s = await engine.open();
    try {
      const a = await s.deadLetters.record(letter('u1'));
      expect(a.existed).toBe(false);
      await s.deadLetters.record(letter('u2', { channel: 'telegram', account: 'main' }));
      expect(await s.deadLetters.count()).toBe(2);
      const all = await s.deadLetters.list();
      expect(all.map((d) => d.dedupeKey)).toEqual(['u2', 'u1']);
      expect(all[1]).toMatchObject({
        id: a.id,
        conversation: 'conv-1',
        sender: 'ws:tok-1',
        summary: 'message: hello',
        attempts: 3,
        error: 'over limits.inboxMaxBytes',
      });
      expect((await s.deadLetters.list({ channel: 'telegram:main' })).map((d) => d.dedupeKey)).toEqual(['u2']);
      // Recording it again changes nothing new; the inbox knows the key, so a redelivery is a duplicate.
      expect((await s.deadLetters.record(letter('u1'))).existed).toBe(true);
      expect(await s.deadLetters.count()).toBe(2);
      expect(await s.turns.seen('websocket', 'default', 'u1')).toMatchObject({ duplicate: true, turnId: null });
    } finally {
      await s.close();
    }
  });

  it('never marks an item that already has a turn as failed', async () => {
    const s = await engine.open();
    try {
      const p = await s.principals.create({ name: 'Ada', role: 'member' });
      const r = await s.turns.accept(inbound('u3'), { key: dmKey(p.id), clientId: null });
      const d = await s.deadLetters.record(letter('u3'));
      expect(d).toEqual({ id: r.inboxId, existed: true });
      expect(await s.deadLetters.count()).toBe(0);
    } finally {
      await s.close();
    }
  });
});
