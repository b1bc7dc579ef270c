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
