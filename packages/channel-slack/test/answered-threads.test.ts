import type { DeliveryRecord } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { AnsweredThreads, threadOfDelivery } from '../src/answered-threads.js';

const row = (thread?: string): DeliveryRecord => ({ content: { text: 'x', ...(thread ? { thread } : {}) } }) as unknown as DeliveryRecord;

describe('AnsweredThreads', () => {
  it('knows added threads without reading the ledger', async () => {
    const reads: string[] = [];
    const t = new AnsweredThreads(async (c) => {
      reads.push(c);
      return [];
    });
    t.add('C1', '1.0001');
    expect(await t.has('C1', '1.0001')).toBe(true);
    expect(reads).toEqual([]);
    expect(await t.has('C2', '1.0001')).toBe(false);
    expect(reads).toEqual(['C2']);
  });

  it('reads a channel from the ledger once, for any number of misses', async () => {
    const reads: string[] = [];
    const t = new AnsweredThreads(async (c) => {
      reads.push(c);
      return [row('1.0001'), row(), row('1.0002')];
    });
    expect(await t.has('C1', '1.0002')).toBe(true);
    expect(await t.has('C1', '9.9999')).toBe(false);
    expect(await t.has('C1', '1.0001')).toBe(true);
    expect(reads).toEqual(['C1']);
  });

  it('a ledger failure is thrown and the next miss reads again', async () => {
    let fail = true;
    const t = new AnsweredThreads(async () => {
      if (fail) throw new Error('db down');
      return [row('1.0001')];
    });
    await expect(t.has('C1', '1.0001')).rejects.toThrow('db down');
    fail = false;
    expect(await t.has('C1', '1.0001')).toBe(true);
  });

  it('stays bounded; a forgotten thread is found again in the ledger', async () => {
    let reads = 0;
    const t = new AnsweredThreads(async () => {
      reads++;
      return [row('1.0001')];
    }, 2);
    expect(await t.has('C1', '1.0001')).toBe(true);
    t.add('C2', '2.0001');
    t.add('C2', '2.0002');
    expect(reads).toBe(1);
    expect(await t.has('C1', '1.0001')).toBe(true);
    expect(reads).toBe(2);
  });

  it('threadOfDelivery reads the thread the renderer recorded', () => {
    expect(threadOfDelivery(row('5.0001'))).toBe('5.0001');
    expect(threadOfDelivery(row())).toBeUndefined();
  });
});
