import { afterAll, beforeAll } from 'vitest';
import { type PgServer, setGatewayStorage, startPostgres } from '@switchboard/testkit';

/**
 * Imported first by a `test/postgres/*.e2e.test.ts` file: one PostgreSQL server for the file, and
 * every gateway the file's tests start runs on a fresh database of it (`storage.kind: "postgres"`).
 * The e2e file imported next runs unchanged, on PostgreSQL.
 */
let server: PgServer | undefined;

beforeAll(async () => {
  server = await startPostgres();
  const pgServer = server;
  setGatewayStorage(async () => ({ kind: 'postgres', url: await pgServer.createDatabase() }));
});

afterAll(async () => {
  setGatewayStorage(null);
  await server?.destroy();
});
