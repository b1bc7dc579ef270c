import fc from 'fast-check';
import { isSwbError, SwbError, SwbErrorCode } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asStorageError, isConnectionError, openPostgresStorage } from '../src/index.js';

describe('isConnectionError / asStorageError', () => {
  it.each([
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    [Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    [Object.assign(new Error('connection failure'), { code: '08006' })],
    [new Error('Connection terminated unexpectedly')],
    [new Error('timeout exceeded when trying to connect')],
    [new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], '')],
    [new Error('wrapped', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })],
  ])('a connection failure becomes the retryable SWB_E_STORAGE_UNAVAILABLE: %s', (err) => {
    expect(isConnectionError(err)).toBe(true);
    const wrapped = asStorageError(err);
    expect(isSwbError(wrapped, SwbErrorCode.StorageUnavailable)).toBe(true);
    expect((wrapped as SwbError).retryable).toBe(true);
    expect((wrapped as Error).cause).toBe(err);
  });

  it.each([
    [Object.assign(new Error('duplicate key value'), { code: '23505' })],
    [Object.assign(new Error('could not serialize access'), { code: '40001' })],
    [Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })],
    [new Error('relation "x" does not exist')],
    [new SwbError(SwbErrorCode.ShuttingDown)],
  ])('a statement error stays what it is: %s', (err) => {
    expect(isConnectionError(err)).toBe(false);
    expect(asStorageError(err)).toBe(err);
  });

  it('is total over hostile values (cycles, getters that throw are not read, anything)', () => {
    const cyclic: Record<string, unknown> = { message: 'loop' };
    cyclic.cause = cyclic;
    expect(isConnectionError(cyclic)).toBe(false);
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (v) => {
        expect(typeof isConnectionError(v)).toBe('boolean');
        const out = asStorageError(v);
        expect(Object.is(out, v) || isSwbError(out, SwbErrorCode.StorageUnavailable)).toBe(true);
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });
});

describe('PostgreSQL stopped and started under an open storage', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  it('calls fail with SWB_E_STORAGE_UNAVAILABLE, ping reports down, and the pool serves again once the server is back', async () => {
    const errors: Error[] = [];
    const storage = await openPostgresStorage({ url: await server.createDatabase(), max: 3, connectionTimeout: 1000, onError: (e) => errors.push(e) });
    try {
      // Three pooled connections, idle when the server goes away.
      await Promise.all([storage.ping(), storage.ping(), storage.ping()]);
      expect(await storage.deadLetters.count()).toBe(0);
      await server.stop();
      const failed = await storage.deadLetters.count().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isSwbError(failed, SwbErrorCode.StorageUnavailable)).toBe(true);
      expect(String((failed as Error).message)).not.toContain(server.password);
      const down = await storage.ping();
      expect(down.ok).toBe(false);
      await server.start();
      // No broken client stays pooled: every call after the restart succeeds.
      for (let i = 0; i < 6; i++) expect(await storage.deadLetters.count()).toBe(0);
      expect(await storage.ping()).toEqual({ ok: true });
    } finally {
      await storage.close();
    }
  });
});
