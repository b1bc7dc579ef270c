import { describe, expect, it } from 'vitest';
import { RecentKeys } from '../src/recent-keys.js';

describe('RecentKeys', () => {
  it('runs a key once; a concurrent duplicate waits for the first and is folded', async () => {
    const keys = new RecentKeys();
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = keys.once('k', async () => {
      runs++;
      await gate;
    });
    const b = keys.once('k', async () => void runs++);
    release();
    expect(await Promise.all([a, b])).toEqual([true, false]);
    expect(await keys.once('k', async () => void runs++)).toBe(false);
    expect(runs).toBe(1);
  });

  it('a failed first attempt is not remembered: the next delivery runs again', async () => {
    const keys = new RecentKeys();
    await expect(keys.once('k', async () => Promise.reject(new Error('inbox down')))).rejects.toThrow('inbox down');
    expect(await keys.once('k', async () => undefined)).toBe(true);
  });

  it('forgets keys after the ttl', async () => {
    const keys = new RecentKeys(0);
    expect(await keys.once('k', async () => undefined)).toBe(true);
    expect(await keys.once('k', async () => undefined)).toBe(true);
  });
});
