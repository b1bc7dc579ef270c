import { describe, expect, it } from 'vitest';
import type { Entry, NewEntry, Storage } from '../src/index.js';
import { TranscriptCache } from '../src/transcript-cache.js';

/** Just the two session calls the cache uses, over arrays, counting loads. */
function sessionsOnly() {
  const data = new Map<string, Entry[]>();
  const loads: string[] = [];
  const storage = {
    sessions: {
      async load(id: string) {
        loads.push(id);
        return [...(data.get(id) ?? [])];
      },
      async append(id: string, entries: NewEntry[]) {
        const list = data.get(id) ?? [];
        const stored = entries.map((e, i) => ({ ...e, sessionId: id, seq: list.length + i + 1, createdAt: new Date() }));
        data.set(id, [...list, ...stored]);
        return stored;
      },
    },
  } as unknown as Storage;
  return { storage, loads, data };
}

const user = (text: string): NewEntry => ({ kind: 'user', turnId: 't', payload: { content: [{ type: 'text', text }] } });

describe('TranscriptCache', () => {
  it('serves a session from memory after the first load and mirrors appends in order', async () => {
    const { storage, loads } = sessionsOnly();
    const cache = new TranscriptCache(storage, 10, 100);
    await cache.append('s1', [user('a')]);
    expect(await cache.get('s1')).toHaveLength(1);
    await cache.append('s1', [user('b')]);
    const entries = await cache.get('s1');
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(loads).toEqual(['s1']);
  });

  it('mirrors what another storage call stored with the sequence numbers the store gave, never guessed ones', async () => {
    const { storage } = sessionsOnly();
    const cache = new TranscriptCache(storage, 10, 100);
    await cache.append('s1', [user('a')]);
    await cache.get('s1');
    // e.g. turns.finish stored two entries after a concurrent note took seq 2
    const stored: Entry[] = [
      { ...user('b'), sessionId: 's1', seq: 3, createdAt: new Date(0) },
      { ...user('c'), sessionId: 's1', seq: 4, createdAt: new Date(0) },
    ];
    cache.mirror('s1', stored);
    expect((await cache.get('s1')).map((e) => e.seq)).toEqual([1, 3, 4]);
    expect(cache.size()).toEqual({ sessions: 1, entries: 3 });
    // A session not held is not filled in from a partial write: the next read loads it whole.
    cache.mirror('s2', stored);
    expect(cache.size().sessions).toBe(1);
  });

  it('stays within its session and entry bounds, evicting the least recently used', async () => {
    const { storage, loads } = sessionsOnly();
    const cache = new TranscriptCache(storage, 2, 5);
    for (const s of ['a', 'b', 'c']) {
      await cache.get(s);
      await cache.append(s, [user(`${s}1`), user(`${s}2`)]);
    }
    expect(cache.size().sessions).toBeLessThanOrEqual(2);
    expect(cache.size().entries).toBeLessThanOrEqual(5);
    // 'a' was evicted: the next read reloads it from storage, whole.
    expect((await cache.get('a')).map((e) => (e.payload as { content: Array<{ text: string }> }).content[0]!.text)).toEqual(['a1', 'a2']);
    expect(loads.filter((s) => s === 'a')).toHaveLength(2);
    // A single session larger than the entry bound is still kept while it is the one in use.
    await cache.append('a', [user('a3'), user('a4'), user('a5'), user('a6')]);
    expect(cache.size()).toEqual({ sessions: 1, entries: 6 });
  });
});
