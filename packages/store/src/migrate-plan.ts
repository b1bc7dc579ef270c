import { getTableName, is } from 'drizzle-orm';
import { getTableConfig as pgTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { SwbError, SwbErrorCode } from '@switchboard/core';
import { searchDocument } from './memory-fts.js';
import * as pgSchema from './pg/schema.js';
import * as sqliteSchema from './schema.js';

/** A refused or failed `migrate-storage` run; `table` names the table at fault when there is one. Nothing was written. */
export class StorageMigrationError extends SwbError {
  constructor(
    message: string,
    readonly table?: string,
  ) {
    super(SwbErrorCode.StorageMigration, message);
    this.name = 'StorageMigrationError';
  }
}

/** How a column is stored on PostgreSQL, which decides its canonical text form. */
export type ColumnKind = 'integer' | 'real' | 'text';

/** One column copied from SQLite. */
export interface CopiedColumn {
  readonly name: string;
  readonly kind: ColumnKind;
  readonly nullable: boolean;
}

/** A PostgreSQL-only column computed from the SQLite row (`memories.search`). */
export interface DerivedColumn {
  readonly name: string;
  compute(row: Readonly<Record<string, unknown>>): string;
}

/** How one table is copied. */
export interface TablePlan {
  readonly name: string;
  /** The SQLite table's columns, in schema order: every one is copied. */
  readonly columns: readonly CopiedColumn[];
  /** Primary-key columns: rows are read, inserted and checksummed in this order. */
  readonly key: readonly CopiedColumn[];
  /** The PostgreSQL twin has an explicit `rowid` column, filled from SQLite's implicit rowid. */
  readonly rowid: boolean;
  readonly derived: readonly DerivedColumn[];
  /** Identity columns on PostgreSQL: their sequences continue past the copied maximum. */
  readonly identities: readonly string[];
  /** Nullable foreign-key columns inserted as NULL and set once every table is in (they close a cycle: inbox ↔ turns). */
  readonly deferred: readonly CopiedColumn[];
  /** Every column of the PostgreSQL twin (copied, `rowid`, derived and generated ones). */
  readonly pgColumns: readonly string[];
}

// PostgreSQL columns that have no SQLite column of their name, and where their value comes from.
const DERIVED: Readonly<Record<string, Readonly<Record<string, DerivedColumn['compute']>>>> = {
  memories: { search: (row) => searchDocument(String(row.text), String(row.tags)) },
};

/**
 * Tables only the PostgreSQL engine has: state replicas share while they run (rate-limit buckets,
 * failed-auth windows, leases, fan-out staging), short-lived and meaningless to a stopped SQLite
 * gateway. Never copied; any other table on one side only stops the plan.
 */
export const PG_ONLY_TABLES: ReadonlySet<string> = new Set([
  'rate_buckets',
  'auth_failures',
  'leases',
  'fanout_frames',
  'shared_marks',
  'console_sessions',
  'shared_slots',
]);

const kindOf = (sqlType: string, where: string): ColumnKind => {
  if (sqlType === 'integer') return 'integer';
  if (sqlType === 'real') return 'real';
  if (sqlType === 'text') return 'text';
  throw new StorageMigrationError(`the SQLite column ${where} has type ${sqlType}, which migrate-storage does not know how to copy`);
};

const pgKindOf = (sqlType: string): ColumnKind | 'other' =>
  sqlType === 'bigint' ? 'integer' : sqlType === 'double precision' ? 'real' : sqlType === 'text' ? 'text' : 'other';

/** Every table of a schema module, keyed by its SQL name, in export order. */
function tablesOf<T>(mod: Record<string, unknown>, isTable: (v: unknown) => v is T): Map<string, T> {
  const out = new Map<string, T>();
  for (const value of Object.values(mod)) if (isTable(value)) out.set(getTableName(value as never), value);
  return out;
}

/**
 * The copy plan of every table, read from the two schema modules (never a hand-written list, so a
 * table added to the schema is copied too), in foreign-key order. Throws when the modules disagree:
 * a table on one side only, a SQLite column PostgreSQL lacks or types differently, or a PostgreSQL
 * column with no source.
 */
export function migrationPlan(): TablePlan[] {
  const lite = tablesOf(sqliteSchema, (v): v is SQLiteTable => is(v, SQLiteTable));
  const pg = tablesOf(pgSchema, (v): v is PgTable => is(v, PgTable));
  const onlyOne = [...lite.keys()].filter((t) => !pg.has(t)).concat([...pg.keys()].filter((t) => !lite.has(t) && !PG_ONLY_TABLES.has(t)));
  if (onlyOne.length > 0) throw new StorageMigrationError(`the SQLite and PostgreSQL schemas differ: table ${onlyOne.join(', ')} exists on one engine only`);

  const plans = new Map<string, TablePlan & { deps: Map<string, string[]> }>();
  for (const [name, table] of lite) {
    const lc = sqliteTableConfig(table);
    const pc = pgTableConfig(pg.get(name) as PgTable);
    const columns: CopiedColumn[] = lc.columns.map((c) => ({ name: c.name, kind: kindOf(c.getSQLType(), `${name}.${c.name}`), nullable: !c.notNull }));
    const pgCols = new Map(pc.columns.map((c) => [c.name, c]));
    for (const c of columns) {
      const twin = pgCols.get(c.name);
      if (!twin || pgKindOf(twin.getSQLType()) !== c.kind)
        throw new StorageMigrationError(
          `the SQLite and PostgreSQL schemas differ: column ${name}.${c.name} is missing on PostgreSQL or has another type`,
          name,
        );
    }
    const copied = new Set(columns.map((c) => c.name));
    const derived: DerivedColumn[] = [];
    let rowid = false;
    for (const c of pc.columns) {
      if (copied.has(c.name) || c.generated) continue;
      const compute = DERIVED[name]?.[c.name];
      if (c.name === 'rowid') rowid = true;
      else if (compute) derived.push({ name: c.name, compute });
      else throw new StorageMigrationError(`the PostgreSQL column ${name}.${c.name} has no source in the SQLite schema`, name);
    }
    const keyNames = lc.primaryKeys[0]?.columns.map((c) => c.name) ?? lc.columns.filter((c) => c.primary).map((c) => c.name);
    if (keyNames.length === 0) throw new StorageMigrationError(`the table ${name} has no primary key to order its rows by`, name);
    const deps = new Map<string, string[]>();
    for (const fk of pc.foreignKeys) {
      const ref = fk.reference();
      const target = getTableName(ref.foreignTable);
      if (target !== name) deps.set(target, [...(deps.get(target) ?? []), ...ref.columns.map((c) => c.name)]);
    }
    plans.set(name, {
      name,
      columns,
      key: keyNames.map((k) => columns.find((c) => c.name === k) as CopiedColumn),
      rowid,
      derived,
      identities: pc.columns.filter((c) => c.generatedIdentity).map((c) => c.name),
      deferred: [],
      pgColumns: pc.columns.map((c) => c.name),
      deps,
    });
  }
  return foreignKeyOrder([...plans.values()]);
}

/** Parents before children; a cycle is broken at a table whose remaining references are all nullable (set after the copy). */
function foreignKeyOrder(plans: Array<TablePlan & { deps: Map<string, string[]> }>): TablePlan[] {
  const placed = new Set<string>();
  const out: TablePlan[] = [];
  const place = (p: TablePlan & { deps: Map<string, string[]> }, deferred: CopiedColumn[]) => {
    const { deps: _deps, ...plan } = p;
    out.push({ ...plan, deferred });
    placed.add(p.name);
  };
  while (out.length < plans.length) {
    const rest = plans.filter((p) => !placed.has(p.name));
    const ready = rest.find((p) => [...p.deps.keys()].every((t) => placed.has(t)));
    if (ready) {
      place(ready, []);
      continue;
    }
    const breakable = rest.find((p) => [...p.deps].every(([t, cols]) => placed.has(t) || cols.every((c) => p.columns.find((x) => x.name === c)?.nullable)));
    if (!breakable) throw new StorageMigrationError(`the tables ${rest.map((p) => p.name).join(', ')} reference each other through NOT NULL columns`);
    const open = [...breakable.deps].filter(([t]) => !placed.has(t)).flatMap(([, cols]) => cols);
    place(
      breakable,
      breakable.columns.filter((c) => open.includes(c.name)),
    );
  }
  return out;
}

/** The value of one cell as read from either engine: SQLite integers as bigint, PostgreSQL int8 as its decimal text. */
export type Cell = bigint | number | string | null | Uint8Array;

/**
 * A cell's canonical text for the checksum, the same for both engines: `n` for NULL, `i<decimal>`
 * for integers, `r<shortest round-trip>` for reals, `t<text>` for text. PostgreSQL hands int8 as
 * text, so the column's kind decides how a string reads there.
 */
export function canonicalCell(value: Cell, kind: ColumnKind, from: 'sqlite' | 'postgres'): string {
  if (value === null) return 'n';
  if (typeof value === 'bigint') return `i${value}`;
  if (typeof value === 'number') return Number.isInteger(value) && kind === 'integer' && from === 'postgres' ? `i${value}` : `r${String(value)}`;
  if (typeof value === 'string') return from === 'postgres' && kind === 'integer' ? `i${value}` : `t${value}`;
  return `b${Buffer.from(value).toString('hex')}`;
}

/** One row's line in the checksum: its canonical cells as a JSON array (unambiguous whatever the text holds), then a newline. */
export function canonicalRow(cells: readonly string[]): string {
  return `${JSON.stringify(cells)}\n`;
}
