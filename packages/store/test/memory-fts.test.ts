import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ftsQuery, MAX_FTS_TERMS } from '../src/memory-fts.js';

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
