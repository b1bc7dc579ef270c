/**
 * Quote removal for the word nodes the bash grammar produces (the parser finds the quotes; these
 * turn a node's text into the word the shell passes on).
 */

/** An unquoted word: `\x` → `x`, a backslash-newline disappears. */
export function unescapeUnquoted(text: string): string {
  return text.replace(/\\(\n|[\s\S])/gu, (_match, ch: string) => (ch === '\n' ? '' : ch));
}

/** The inside of `"…"`: only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes. */
export function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/gu, (_match, ch: string) => (ch === '\n' ? '' : ch));
}

const SIMPLE_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['a', '\x07'],
  ['b', '\b'],
  ['e', '\x1b'],
  ['E', '\x1b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
  ['v', '\v'],
  ['\\', '\\'],
  ["'", "'"],
  ['"', '"'],
  ['?', '?'],
]);

/** The inside of `$'…'` (bash ANSI-C quoting): `\xHH`, `\NNN`, `\uHHHH`, `\UHHHHHHHH`, `\cX` and the letter escapes. */
export function decodeAnsiC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c[\s\S]|[\s\S])/gu, (match, esc: string) => {
    const head = esc[0] ?? '';
    if (head === 'x' || head === 'u' || head === 'U') return codePoint(Number.parseInt(esc.slice(1), 16), match);
    if (/^[0-7]/u.test(esc)) return codePoint(Number.parseInt(esc, 8) & 0xff, match);
    if (head === 'c' && esc.length === 2) return String.fromCharCode((esc.charCodeAt(1) & 0x1f) >>> 0);
    return SIMPLE_ESCAPES.get(esc) ?? match;
  });
}

function codePoint(value: number, fallback: string): string {
  return Number.isInteger(value) && value >= 0 && value <= 0x10ffff ? String.fromCodePoint(value) : fallback;
}
