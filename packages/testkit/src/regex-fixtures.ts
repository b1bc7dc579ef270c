/**
 * 600 000 pseudo-random a/b characters (fixed seed): RE2's automaton for `(a|b)*a(a|b){900}$`
 * cannot settle into a few states on it, so matching costs input length × pattern size — a
 * linear-time search that still outlasts any sensible deadline.
 */
export function hardRegexText(length = 600_000): string {
  let x = 12345;
  let s = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += x & 65536 ? 'a' : 'b';
  }
  return s;
}
