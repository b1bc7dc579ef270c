import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';

// Generators and checks shared by the fuzz e2e files (issue 10, acceptance 1): inputs that are
// hostile or near-valid — each one fails validation by construction — and a per-table row count
// and checksum of the gateway's database, to show such inputs change nothing.

/** Total inputs for a fuzz file: `SWITCHBOARD_FUZZ_RUNS` (for longer soak runs) or `fallback`. */
export function fuzzRuns(fallback = 10_000): number {
  const n = Number(process.env.SWITCHBOARD_FUZZ_RUNS);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** fast-check options: the seed is printed on failure; `SWITCHBOARD_FUZZ_SEED` replays one run. */
export function fcParams(numRuns: number): fc.Parameters<unknown> {
  const seed = Number(process.env.SWITCHBOARD_FUZZ_SEED);
  return { numRuns, ...(Number.isInteger(seed) ? { seed } : {}), verbose: 0 };
}

/** Bookkeeping a valid authentication updates (a reconnecting fuzz socket may touch it): not a change the fuzz looks for. */
const VOLATILE_COLUMNS = new Set(['tokens.last_used_at']);

/** Row count and SHA-256 of every row, per table of the gateway's SQLite file (read-only handle), `audit` and `tokens.last_used_at` left out. */
export function dbChecksums(dataDir: string): Record<string, { rows: number; sha256: string }> {
  const db = new Database(join(dataDir, 'switchboard.db'), { readonly: true, fileMustExist: true });
  try {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>
    )
      .map((t) => t.name)
      .filter((t) => t !== 'audit');
    return Object.fromEntries(
      tables.map((t) => {
        const q = `"${t.replaceAll('"', '""')}"`;
        const cols = (db.prepare(`PRAGMA table_info(${q})`).all() as Array<{ name: string }>)
          .map((c) => c.name)
          .filter((c) => !VOLATILE_COLUMNS.has(`${t}.${c}`))
          .map((c) => `"${c.replaceAll('"', '""')}"`)
          .join(', ');
        let rows: unknown[];
        try {
          rows = db.prepare(`SELECT ${cols} FROM ${q} ORDER BY rowid`).raw().all();
        } catch {
          rows = db.prepare(`SELECT ${cols} FROM ${q}`).raw().all(); // a WITHOUT ROWID table
        }
        const hash = createHash('sha256');
        for (const r of rows)
          hash.update(JSON.stringify(r, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : typeof v === 'bigint' ? String(v) : v))).update('\n');
        return [t, { rows: rows.length, sha256: hash.digest('hex') }];
      }),
    );
  } finally {
    db.close();
  }
}

/** Keys that reach prototype properties when a record is indexed without an own-property check. */
export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
  'then',
] as const;

/** Sets an own, enumerable property — also for `__proto__`, so JSON.stringify writes it out. */
export function withKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

/** Strings a validator must survive: prototype keys, control and odd Unicode characters, paths, and huge ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\n',
      '..',
      '../../etc/passwd',
      '%00',
      '\u202e',
      '\ud800',
      '🦄'.repeat(40),
      '${HOME}',
      '{{x}}',
      'null',
      'true',
      '-1',
      '1e400',
      '<script>',
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n)) },
);

/** Any JSON value, with hostile keys and strings mixed in (bounded size). */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 20 }),
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 10 })), tie('value')), { maxLength: 4 }).map((entries) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of entries) withKey(o, k, v);
      return o;
    }),
  ),
})).value;

/** A JSON text nested `depth` levels deep, as an object chain or an array chain. */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 200, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** The subset of JSON Schema the gateway's OpenAPI document (zod 4 output) uses. */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  nullable?: boolean;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  default?: unknown;
}

type JsonType = 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'null';
const JSON_TYPES = ['string', 'number', 'boolean', 'null', 'array', 'object'] as const;

/** `type: [a, b]` and `nullable` as the equivalent `anyOf`, so the generators see one type per schema. */
function normalized(schema: JsonSchema): JsonSchema {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length <= 1 && !schema.nullable) return types.length === 1 ? { ...schema, type: types[0] } : schema;
  const { type: _t, nullable: _n, ...rest } = schema;
  const alts: JsonSchema[] = types.map((t) => ({ ...rest, type: t }));
  if (schema.nullable && !types.includes('null')) alts.push({ type: 'null' });
  return { anyOf: alts.length > 0 ? alts : [rest, { type: 'null' }] };
}

/** Whether `value` satisfies `schema` as far as its known keywords go (unknown keywords accept). */
export function accepts(schema: JsonSchema, value: unknown): boolean {
  const sc = normalized(schema);
  const alts = sc.oneOf ?? sc.anyOf;
  if (alts) return alts.some((a) => accepts(a, value));
  if (sc.const !== undefined && value !== sc.const) return false;
  if (sc.enum && !sc.enum.includes(value)) return false;
  switch (sc.type) {
    case 'string': {
      if (typeof value !== 'string') return false;
      if (sc.minLength !== undefined && value.length < sc.minLength) return false;
      if (sc.maxLength !== undefined && value.length > sc.maxLength) return false;
      if (sc.pattern && !new RegExp(sc.pattern).test(value)) return false;
      if (sc.format === 'date-time' && Number.isNaN(Date.parse(value))) return false;
      return true;
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (sc.type === 'integer' && !Number.isInteger(value)) return false;
      if (sc.minimum !== undefined && value < sc.minimum) return false;
      if (sc.maximum !== undefined && value > sc.maximum) return false;
      if (sc.exclusiveMinimum !== undefined && value <= sc.exclusiveMinimum) return false;
      if (sc.exclusiveMaximum !== undefined && value >= sc.exclusiveMaximum) return false;
      return true;
    }
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array': {
      if (!Array.isArray(value)) return false;
      if (sc.minItems !== undefined && value.length < sc.minItems) return false;
      if (sc.maxItems !== undefined && value.length > sc.maxItems) return false;
      return !sc.items || value.every((v) => accepts(sc.items!, v));
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      const o = value as Record<string, unknown>;
      const props = sc.properties ?? {};
      for (const k of sc.required ?? []) if (!Object.hasOwn(o, k)) return false;
      for (const k of Object.keys(o)) {
        if (Object.hasOwn(props, k)) {
          if (!accepts(props[k]!, o[k])) return false;
        } else if (sc.additionalProperties === false) return false;
        else if (typeof sc.additionalProperties === 'object' && !accepts(sc.additionalProperties, o[k])) return false;
      }
      return true;
    }
    default:
      return true;
  }
}
const sampleOfType = (t: (typeof JSON_TYPES)[number]): fc.Arbitrary<unknown> =>
  ({
    string: fc.string({ maxLength: 12 }),
    number: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.constant({ x: 1 }),
  })[t];

/** Values of another JSON type than `schema.type` (integer and number count as one type). */
function wrongType(schema: JsonSchema): fc.Arbitrary<unknown> {
  const own = schema.type === 'integer' ? 'number' : (schema.type as string | undefined);
  return fc.constantFrom(...JSON_TYPES.filter((t) => t !== own)).chain(sampleOfType);
}

/** A value that `schema` accepts. */
export function validValue(input: JsonSchema): fc.Arbitrary<unknown> {
  const schema = normalized(input);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alts = schema.oneOf ?? schema.anyOf;
  if (alts) return fc.oneof(...alts.map(validValue));
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
      const plain = schema.pattern
        ? fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity))
        : fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 20, 20) });
      // Valid strings include the prototype keys where the schema allows them (ids, names, room keys).
      const proto = PROTO_KEYS.filter((k) => accepts(schema, k));
      return proto.length > 0 ? fc.oneof({ weight: 3, arbitrary: plain }, { weight: 1, arbitrary: fc.constantFrom(...proto) }) : plain;
    }
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1e6, -1e6), max: Math.min(schema.maximum ?? 1e6, 1e6) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? validValue(schema.items) : fc.integer(), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    case 'object': {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const known = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validValue(s)])), { requiredKeys: [...required] });
      const ap = schema.additionalProperties;
      if (typeof ap !== 'object') return known;
      // A record keyed by outside input (rooms, say): prototype keys too.
      const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ minLength: 1, maxLength: 10 })), validValue(ap)), { maxLength: 3 });
      return fc.tuple(known, extra).map(([o, entries]) => {
        const out = { ...(o as Record<string, unknown>) };
        for (const [k, v] of entries) if (!Object.hasOwn(props, k)) withKey(out, k, v);
        return out;
      });
    }
    default:
      return hostileJson;
  }
}

/** Every enum value in `schemas`, so a broken enum value is never one a sibling branch accepts. */
function enumValues(schema: JsonSchema, into = new Set<unknown>()): Set<unknown> {
  for (const v of schema.enum ?? []) into.add(v);
  if (schema.const !== undefined) into.add(schema.const);
  for (const s of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...Object.values(schema.properties ?? {})]) enumValues(s, into);
  if (schema.items) enumValues(schema.items, into);
  if (typeof schema.additionalProperties === 'object') enumValues(schema.additionalProperties, into);
  return into;
}

/**
 * A value that `schema` refuses, near a valid one: one field has the wrong type, breaks its
 * enum, pattern or length, is missing (when required) or is an unknown key (prototype keys
 * included). `taken` are values no branch of the root accepts for an enum.
 */
export function brokenValue(input: JsonSchema, taken: Set<unknown> = enumValues(input)): fc.Arbitrary<unknown> {
  const schema = normalized(input);
  const ways: fc.Arbitrary<unknown>[] = [wrongType(schema)];
  const alts = schema.oneOf ?? schema.anyOf;
  if (alts) return fc.oneof(...alts.map((s) => brokenValue(s, taken)));
  if (schema.enum || schema.const !== undefined) {
    ways.push(fc.oneof(fc.string({ maxLength: 12 }), hostileString).filter((s) => !taken.has(s)));
    return fc.oneof(...ways);
  }
  switch (schema.type) {
    case 'string': {
      if (schema.maxLength !== undefined) ways.push(fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 2_000 }).map((n) => 'y'.repeat(n)));
      if ((schema.minLength ?? 0) > 0) ways.push(fc.constant(''));
      if (schema.pattern) {
        const re = new RegExp(schema.pattern);
        ways.push(fc.oneof(hostileString, fc.string({ maxLength: 12 })).filter((s) => !re.test(s)));
      }
      if (schema.format === 'date-time') ways.push(fc.constantFrom('yesterday', '2026-13-40T99:99:99Z', '1e9'));
      break;
    }
    case 'integer':
    case 'number': {
      if (schema.minimum !== undefined) ways.push(fc.constant(schema.minimum - 1));
      if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) ways.push(fc.constant(schema.maximum + 1));
      if (schema.type === 'integer') ways.push(fc.constantFrom(1.5, -0.25, 1e300));
      break;
    }
    case 'array': {
      const items = schema.items;
      if (items) ways.push(fc.tuple(fc.array(validValue(items), { maxLength: 2 }), brokenValue(items, taken)).map(([ok, bad]) => [...ok, bad]));
      if ((schema.minItems ?? 0) > 0) ways.push(fc.constant([]));
      break;
    }
    case 'object': {
      const props = schema.properties ?? {};
      const required = schema.required ?? [];
      const base = validValue(schema) as fc.Arbitrary<Record<string, unknown>>;
      if (required.length > 0) {
        ways.push(
          fc.tuple(base, fc.constantFrom(...required)).map(([o, k]) => {
            const { [k]: _gone, ...rest } = o;
            return rest;
          }),
        );
      }
      if (schema.additionalProperties === false) {
        const unknownKey = fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ minLength: 1, maxLength: 12 })).filter((k) => !Object.hasOwn(props, k));
        ways.push(fc.tuple(base, unknownKey, hostileJson).map(([o, k, v]) => withKey({ ...o }, k, v)));
      }
      const names = Object.keys(props);
      if (names.length > 0) {
        ways.push(
          fc
            .constantFrom(...names)
            .chain((k) => fc.tuple(base, fc.constant(k), brokenValue(props[k]!, taken)))
            .map(([o, k, bad]) => withKey({ ...o }, k, bad)),
        );
      }
      if (typeof schema.additionalProperties === 'object') {
        const ap = schema.additionalProperties;
        ways.push(fc.tuple(base, fc.constantFrom(...PROTO_KEYS, 'room-1'), brokenValue(ap, taken)).map(([o, k, bad]) => withKey({ ...o }, k, bad)));
      }
      break;
    }
    default:
      break;
  }
  return fc.oneof(...ways);
}

/** A JSON text that `schema` refuses: near-valid (one field wrong) or hostile in shape. */
export function invalidJsonText(schema: JsonSchema): fc.Arbitrary<string> {
  const hostileTop = fc.oneof(
    fc.constantFrom(
      '[]',
      'null',
      '0',
      '"body"',
      'true',
      '{"a":1,"a":2}',
      '{',
      '',
      '\u0000',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
    ),
    hostileJson
      .filter((v) => !accepts(schema, v) && (typeof v !== 'object' || v === null || Object.keys(v).length > 0))
      .map((v) => JSON.stringify(v) ?? 'null'),
    deepJsonText,
  );
  // Checked against the schema too, so a generator slip (or a keyword it does not know) never sends a valid body.
  const broken = brokenValue(schema).filter((v) => !accepts(schema, v));
  return fc.oneof({ weight: 3, arbitrary: broken.map((v) => JSON.stringify(v) ?? 'null') }, { weight: 1, arbitrary: hostileTop });
}
