import fc from 'fast-check';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDb, type PgDb } from '../src/index.js';
import { ftsQuery, MAX_FTS_TERMS, searchDocument, tsQuery } from '../src/memory-fts.js';

const SAFE = /^"[\p{L}\p{N}]+"\*?( OR "[\p{L}\p{N}]+"\*?)*$/u;

describe('ftsQuery (memory search text → FTS5 MATCH)', () => {
  it('quotes each word, ORs them, prefixes words of three or more characters, and drops syntax', () => {
    expect(ftsQuery('my cat')).toBe('"my" OR "cat"*');
    expect(ftsQuery('NEAR(cat* AND dog) col:x ^y "z')).toBe('"near"* OR "cat"* OR "and"* OR "dog"* OR "col"* OR "x" OR "y" OR "z"');
    expect(ftsQuery('Cat cat CAT')).toBe('"cat"*');
    expect(ftsQuery('  *** () "" ')).toBeNull();
    expect(ftsQuery('')).toBeNull();
    expect(ftsQuery('Zoë 東京')).toBe('"zoë"* OR "東京"');
    // Lower-casing İ adds a combining dot: it separates words like any non-letter.
    expect(ftsQuery('İstanbul')).toBe('"i" OR "stanbul"*');
    // A long word of astral letters is cut between code points.
    expect(ftsQuery('𠀀'.repeat(70))).toBe(`"${'𠀀'.repeat(64)}"*`);
  });

  it('keeps at most MAX_FTS_TERMS terms', () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}x`).join(' ');
    expect(ftsQuery(words)?.split(' OR ')).toHaveLength(MAX_FTS_TERMS);
  });

  it('for any string, yields only quoted letter-and-digit terms (or nothing)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        const q = ftsQuery(text);
        if (q !== null) expect(q).toMatch(SAFE);
      }),
      { numRuns: 2000 },
    );
  });
});

/** The shapes a hostile or careless search text takes: query syntax of both engines, quotes, escapes, lone surrogates. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc
    .array(
      fc.constantFrom(
        "'",
        '"',
        '\\',
        ':*',
        ':',
        '*',
        '&',
        '|',
        '!',
        '(',
        ')',
        '<->',
        '<2>',
        'AND',
        'OR',
        'NOT',
        'NEAR(',
        '\u0000',
        '\uD800',
        '\uDFFF',
        'é',
        'e\u0301',
        'İ',
        '東京',
        '𠀀',
        ' ',
        'cat',
        '1e5',
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join('')),
);

const TS_SAFE = /^'[\p{L}\p{N}]+'(:\*)?( \| '[\p{L}\p{N}]+'(:\*)?)*$/u;
const DOC_SAFE = /^([\p{L}\p{N}]+( [\p{L}\p{N}]+)*)?$/u;

describe('searchDocument and tsQuery (the PostgreSQL memory search)', () => {
  it('folds case and diacritics alike on both sides, and drops syntax', () => {
    expect(searchDocument('Zoë likes the CAFÉ', '["Drinks","x y"]')).toBe('zoe likes the cafe drinks x y');
    expect(searchDocument('e\u0301t\u00e9', 'not json')).toBe('ete');
    expect(searchDocument('a', '{"__proto__":["x"]}')).toBe('a');
    expect(searchDocument('a', '[1, null, "b", {"c": 1}]')).toBe('a b');
    expect(tsQuery("Zoë's café & (tea | !milk):*")).toBe("'zoe':* | 's' | 'cafe':* | 'tea':* | 'milk':*");
    expect(tsQuery("'' \\ :* & | ! ( )")).toBeNull();
    expect(tsQuery('')).toBeNull();
    expect(tsQuery('ab AB')).toBe("'ab'");
  });

  it('keeps at most MAX_FTS_TERMS terms, each cut to 64 code points', () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}x`).join(' ');
    expect(tsQuery(words)?.split(' | ')).toHaveLength(MAX_FTS_TERMS);
    expect(tsQuery('𠀀'.repeat(70))).toBe(`'${'𠀀'.repeat(64)}':*`);
  });

  it('for any string, never throws: tsQuery yields only quoted letter-and-digit lexemes joined by " | " (or nothing), the document only words', () => {
    fc.assert(
      fc.property(hostile, hostile, (text, tag) => {
        const q = tsQuery(text);
        if (q !== null) expect(q).toMatch(TS_SAFE);
        expect(searchDocument(text, JSON.stringify([tag]))).toMatch(DOC_SAFE);
        expect(searchDocument(text, tag)).toMatch(DOC_SAFE);
      }),
      { numRuns: 2000 },
    );
  });

  it('handles huge input without throwing', () => {
    const huge = `${'cat '.repeat(250_000)}${'\uD800'.repeat(1000)}"'\\:*`;
    expect(tsQuery(huge)).toBe("'cat':*");
    expect(searchDocument(huge, JSON.stringify(Array.from({ length: 1000 }, () => 'tag')))).toMatch(/^cat( cat)* tag( tag)*$/);
  });
});

describe('tsQuery on a real PostgreSQL server', () => {
  let server: PgServer;
  let db: PgDb;
  beforeAll(async () => {
    server = await startPostgres();
    db = createPgDb({ url: await server.createDatabase(), max: 1 });
  });
  afterAll(async () => {
    await db?.pool.end();
    await server?.destroy();
  });

  it("to_tsquery('simple', tsQuery(x)) never errors, and a document finds itself", async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (text) => {
        const q = tsQuery(text);
        if (q === null) return;
        const row = await db.row<{ hit: boolean }>("SELECT to_tsvector('simple', $1) @@ to_tsquery('simple', $2) AS hit", [searchDocument(text, '[]'), q]);
        expect(row?.hit).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
