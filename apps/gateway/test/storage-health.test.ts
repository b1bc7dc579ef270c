import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Storage } from '@switchboard/core';
import { StorageHealth } from '../src/wiring/storage-health.js';

/** A store whose ping answers what the test says, and a logger whose lines the test reads. */
function setup(onRecovered: () => Promise<unknown> = async () => 0) {
  let answer: { ok: true } | { ok: false; error: string } = { ok: true };
  const storage = { engine: 'postgres', ping: async () => answer } as unknown as Storage;
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const recovered: number[] = [];
  const health = new StorageHealth(storage, {
    intervalMs: 60_000,
    log: pino({ level: 'info' }, sink),
    scrub: (t) => t.replaceAll('s3cret', '***'),
    onRecovered: async () => {
      recovered.push(1);
      return onRecovered();
    },
  });
  return {
    health,
    lines,
    recovered,
    set(next: typeof answer) {
      answer = next;
    },
    events: () => lines.map((l) => l.event).filter(Boolean),
  };
}

describe('StorageHealth', () => {
  it('logs each transition once, scrubs the error, and resumes once after the outage', async () => {
    const t = setup();
    await t.health.check();
    expect(t.health.snapshot()).toEqual({ engine: 'postgres', state: 'up' });
    t.set({ ok: false, error: 'connect ECONNREFUSED (password s3cret)' });
    await t.health.check();
    await t.health.check();
    expect(t.health.snapshot()).toEqual({ engine: 'postgres', state: 'down', error: 'connect ECONNREFUSED (password ***)' });
    expect(t.events()).toEqual(['storage_down']);
    expect(t.recovered).toEqual([]);
    t.set({ ok: true });
    await t.health.check();
    await t.health.check();
    expect(t.health.snapshot()).toEqual({ engine: 'postgres', state: 'up' });
    expect(t.events()).toEqual(['storage_down', 'storage_up', 'storage_recovered']);
    expect(t.recovered).toHaveLength(1);
    expect(JSON.stringify(t.lines)).not.toContain('s3cret');
  });

  it('an outage a turn reported (shorter than a ping interval) still resumes at the next good ping', async () => {
    const t = setup();
    t.health.outage();
    await t.health.check();
    expect(t.recovered).toHaveLength(1);
    expect(t.events()).toEqual(['storage_recovered']);
  });

  it('a resume that fails is tried again at the next ping; a throwing ping reads as down', async () => {
    let fail = true;
    const t = setup(async () => {
      if (fail) throw new Error('still flaky');
      return 2;
    });
    const throwing = { engine: 'postgres', ping: async () => Promise.reject(new Error('boom')) } as unknown as Storage;
    const h2 = new StorageHealth(throwing, { intervalMs: 60_000, log: pino({ level: 'silent' }), scrub: (s) => s, onRecovered: async () => 0 });
    await h2.check();
    expect(h2.snapshot()).toEqual({ engine: 'postgres', state: 'down', error: 'boom' });
    t.health.outage();
    await t.health.check();
    expect(t.recovered).toHaveLength(1);
    fail = false;
    await t.health.check();
    expect(t.recovered).toHaveLength(2);
    await t.health.check();
    expect(t.recovered).toHaveLength(2);
    await t.health.stop();
    await h2.stop();
  });
});
