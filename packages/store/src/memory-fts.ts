/** At most this many terms of a search text reach the FTS5 query. */
export const MAX_FTS_TERMS = 16;
/** A term longer than this is cut (FTS5 has no use for longer tokens). */
const MAX_TERM_CHARS = 64;

/**
 * A search text as an FTS5 `MATCH` expression that cannot be hostile: the text's words (runs of
 * letters and digits, as the `unicode61` tokenizer splits them), each as a double-quoted string,
 * OR-ed; words of three or more characters also match as a prefix (`"coffee"*`). Query syntax in
 * the text (`AND`, `NEAR(`, `col:`, `"`, `*`, `^`, parentheses) is never passed on: only letters
 * and digits end up inside the quotes. Returns null when the text has no words (no search runs).
 */
export function ftsQuery(text: string): string | null {
  // Lower-cased before the split: lower-casing may add combining marks (`İ` → `i̇`), which then separate words.
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of words) {
    // Cut by code points, never inside a surrogate pair.
    const word = Array.from(raw).slice(0, MAX_TERM_CHARS).join('');
    if (seen.has(word)) continue;
    seen.add(word);
    terms.push(word.length >= 3 ? `"${word}"*` : `"${word}"`);
    if (terms.length >= MAX_FTS_TERMS) break;
  }
  return terms.length === 0 ? null : terms.join(' OR ');
}

/** Lower case, NFKC, diacritics removed (`Zoë café` → `zoe cafe`): how both engines fold words, as FTS5's `remove_diacritics 2` does. */
function foldWords(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .normalize('NFC')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * The PostgreSQL engine's search document of a memory: its text's and tags' folded words,
 * space-separated (column `memories.search`; its tsvector uses the `simple` configuration, which
 * keeps such words as they are). `tags` is the stored JSON array; anything else counts as no tags.
 */
export function searchDocument(text: string, tags: string): string {
  let list: unknown;
  try {
    list = JSON.parse(tags);
  } catch {
    list = [];
  }
  const words = Array.isArray(list) ? list.filter((t): t is string => typeof t === 'string') : [];
  return foldWords([text, ...words].join(' ')).join(' ');
}

/**
 * A search text as a PostgreSQL `to_tsquery('simple', …)` expression that cannot be hostile: the
 * same words as {@link ftsQuery} (folded like {@link searchDocument}), each a quoted lexeme
 * (prefix match from three characters: `'coffee':*`), OR-ed. Null when the text has no words.
 */
export function tsQuery(text: string): string | null {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of foldWords(text)) {
    const word = Array.from(raw).slice(0, MAX_TERM_CHARS).join('');
    if (seen.has(word)) continue;
    seen.add(word);
    terms.push(Array.from(word).length >= 3 ? `'${word}':*` : `'${word}'`);
    if (terms.length >= MAX_FTS_TERMS) break;
  }
  return terms.length === 0 ? null : terms.join(' | ');
}
