export { type SqliteStorage, type SqliteStorageOptions, defaultMigrationsDir, openSqliteStorage } from './sqlite-storage.js';
// Both shapes: flat table exports for queries, the namespace for `drizzle(db, { schema })`.
export * as schema from './schema.js';
export {
  approvals,
  audit,
  deliveries,
  entries,
  identities,
  inbox,
  pairingHeld,
  pairingRequests,
  policyOverrides,
  principals,
  rules,
  sessions,
  tokens,
  turns,
} from './schema.js';
export {
  type PostgresStorage,
  type PostgresStorageOptions,
  defaultPgMigrationsDir,
  describePgError,
  migratePostgres,
  openPostgresStorage,
  postgresStorage,
} from './pg/postgres-storage.js';
export { type PgDb, type PgPoolOptions, type Sql, asStorageError, createPgDb, isConnectionError, scrubDatabaseUrl } from './pg/db.js';
export {
  type MigrateStorageOptions,
  type MigrationProgress,
  type MigrationReport,
  type TableReport,
  migrateSqliteToPostgres,
} from './migrate-storage.js';
export { type TablePlan, migrationPlan, StorageMigrationError } from './migrate-plan.js';
export { type BusEvent, type BusOptions, PgBus, encodeBusEvent, parseBusPayload, publish, publish as publishBusEvent } from './pg/notify.js';
export { type BusLog, PgReplicaBus } from './pg/replica-bus.js';
export { type FanoutHubOptions, PgFanoutHub } from './pg/channel-fanout.js';
export { pgSharedMarks } from './pg/shared-marks.js';
export { type SharedConsoleSession, type SharedConsoleSessions, pgConsoleSessions } from './pg/console-session-repo.js';
export { type SharedSlotPool, type SlotPoolOptions, pgSlotPool } from './pg/shared-slots.js';
export { type Lease, type LeaseRow, LeaseLostError, acquireLease, fenced, listLeases, releaseLease, renewLease } from './pg/leases.js';
export { pgSessionLeases, sessionLeaseName } from './pg/session-leases.js';
