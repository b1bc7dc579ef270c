import type Database from 'better-sqlite3';
import type { ColumnKind } from '../src/migrate-plan.js';
import { migrationPlan } from '../src/index.js';

/** The value row `i` of a table gets in a column: unique per row, so keys and unique indexes hold, and a foreign key names row `i` of its table. */
function value(table: string, column: string, kind: ColumnKind, i: number): string | number {
  if (kind === 'integer') return i + 1;
  if (kind === 'real') return i + 0.25;
  if (table === 'memories' && column === 'tags') return JSON.stringify([`tag${i}`]);
  return `${table}.${column}.${i} Zoë café`;
}

const q = (name: string) => `"${name}"`;

/**
 * Writes `n` rows into every table of a migrated SQLite database, generically from the copy plan
 * (the list the migration itself uses) and SQLite's own foreign-key list: every table, every
 * column, with each foreign key pointing at an existing row. The columns of a cycle (inbox ↔
 * turns) are set once both tables are filled.
 */
export function fillEveryTable(db: Database.Database, n: number): void {
  const plans = migrationPlan();
  db.transaction(() => {
    for (const p of plans) {
      const fks = db.prepare(`PRAGMA foreign_key_list(${q(p.name)})`).all() as Array<{ table: string; from: string; to: string }>;
      const kindOf = (table: string, col: string) => plans.find((x) => x.name === table)?.columns.find((c) => c.name === col)?.kind ?? 'text';
      const insert = db.prepare(`INSERT INTO ${q(p.name)} (${p.columns.map((c) => q(c.name)).join(', ')}) VALUES (${p.columns.map(() => '?').join(', ')})`);
      for (let i = 0; i < n; i++) {
        insert.run(
          p.columns.map((c) => {
            if (p.deferred.some((d) => d.name === c.name)) return null;
            const fk = fks.find((f) => f.from === c.name);
            return fk ? value(fk.table, fk.to, kindOf(fk.table, fk.to), i) : value(p.name, c.name, c.kind, i);
          }),
        );
      }
    }
    for (const p of plans) {
      for (const d of p.deferred) {
        const fk = (db.prepare(`PRAGMA foreign_key_list(${q(p.name)})`).all() as Array<{ table: string; from: string; to: string }>).find(
          (f) => f.from === d.name,
        );
        if (!fk) continue;
        const key = p.key[0]!;
        const update = db.prepare(`UPDATE ${q(p.name)} SET ${q(d.name)} = ? WHERE ${q(key.name)} = ?`);
        for (let i = 0; i < n; i++) update.run(value(fk.table, fk.to, 'text', i), value(p.name, key.name, key.kind, i));
      }
    }
  })();
}

/** Every row of a table as comparable text (integers and reals by value), sorted: what each engine holds, independent of the migration's checksum code. */
export function normalizeRows(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string[] {
  return rows.map((r) => JSON.stringify(columns.map((c) => (r[c] === null || r[c] === undefined ? null : String(r[c]))))).sort();
}
