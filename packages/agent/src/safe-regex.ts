import { RE2JS } from 're2js';
import { SwbError, SwbErrorCode } from './errors.js';

/** Longest pattern source accepted by default (characters); config `limits.regexMaxLength`. */
export const DEFAULT_REGEX_MAX_LENGTH = 1000;

/**
 * A compiled pattern that matches in time linear in the input (RE2 semantics: no backtracking).
 * Built by {@link compileSafeRegex}; use it wherever a pattern comes from the model, a user or the
 * config, instead of `new RegExp`.
 */
export interface SafeRegex {
  /** The pattern source as given. */
  readonly source: string;
  /** What RE2 compiled (source after escape translation, and RE2JS flags): for a worker to compile the same. */
  readonly engine: { readonly source: string; readonly flags: number };
  /** Whether the pattern matches anywhere in `input` (like `RegExp.prototype.test` without `g`). */
  test(input: string): boolean;
}

/** How {@link compileSafeRegex} compiles a pattern. */
export interface SafeRegexOptions {
  /** Match regardless of letter case. Default false. */
  caseInsensitive?: boolean;
  /** `.` also matches a line break (JavaScript's `s` flag). Default false. */
  dotAll?: boolean;
  /** Longest accepted source, in characters. Default {@link DEFAULT_REGEX_MAX_LENGTH}. */
  maxLength?: number;
  /** The config key that sets `maxLength`, named in the error when a pattern is too long. */
  maxLengthKey?: string;
}

/** A pattern the linear-time engine will not run: too long, unsupported syntax or invalid. */
export class SafeRegexError extends SwbError {
  override readonly name = 'SafeRegexError';
  constructor(
    message: string,
    /** What is wrong: `too-long`, `unsupported` (valid JavaScript that RE2 cannot run) or `invalid`. */
    readonly reason: 'too-long' | 'unsupported' | 'invalid',
  ) {
    super(SwbErrorCode.Regex, message);
  }
}

/**
 * Compiles `source` with RE2 (the `re2js` port), which runs in time linear in the input for every
 * pattern, so no pattern can stall the event loop by backtracking. JavaScript syntax that RE2
 * shares is accepted as is (`\d \w \s \b`, classes, `{n,m}`, non-capturing and named groups,
 * `\p{L}`); `\uXXXX` and `\u{X}` escapes are translated. Backreferences, lookahead, lookbehind,
 * atomic groups and possessive quantifiers need backtracking and are refused by name.
 *
 * @throws {SafeRegexError} naming the limit, the unsupported construct or the syntax error.
 */
export function compileSafeRegex(source: string, opts: SafeRegexOptions = {}): SafeRegex {
  const maxLength = opts.maxLength ?? DEFAULT_REGEX_MAX_LENGTH;
  if (source.length > maxLength) {
    const key = opts.maxLengthKey ? ` (${opts.maxLengthKey})` : '';
    throw new SafeRegexError(`the pattern is ${source.length} characters long; the limit is ${maxLength}${key}`, 'too-long');
  }
  const flags = (opts.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0) | (opts.dotAll ? RE2JS.DOTALL : 0);
  const engineSource = translateEscapes(source);
  let re: RE2JS;
  try {
    re = RE2JS.compile(engineSource, flags);
  } catch (err) {
    const unsupported = findUnsupported(source);
    if (unsupported) {
      throw new SafeRegexError(`${unsupported} not supported: patterns run on a linear-time engine (RE2) that does not backtrack`, 'unsupported');
    }
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    throw new SafeRegexError(`not a valid regular expression (${why})`, 'invalid');
  }
  return { source, engine: { source: engineSource, flags }, test: (input) => re.test(input) };
}

/** `s` with every regular-expression metacharacter escaped, to match it literally inside a pattern. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// JavaScript's \uXXXX and \u{X} become RE2's \x{X}; an escaped backslash before them is left alone.
function translateEscapes(source: string): string {
  return source.replace(/(\\+)u(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4}))/g, (whole, slashes: string, braced?: string, four?: string) =>
    slashes.length % 2 === 1 ? `${slashes.slice(1)}\\x{${braced ?? four}}` : whole,
  );
}

// Names the first construct RE2 cannot run, scanning outside character classes.
function findUnsupported(source: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    const next = source[i + 1] ?? '';
    if (ch === '\\') {
      if (!inClass && /[1-9]/.test(next)) return `backreferences (\\${next}) are`;
      if (!inClass && next === 'k' && source[i + 2] === '<') return 'named backreferences (\\k<name>) are';
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(' && next === '?') {
      const rest = source.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!')) return `lookahead (?${rest[0]}…) is`;
      if (rest === '<=' || rest === '<!') return `lookbehind (?${rest}…) is`;
      if (rest.startsWith('>')) return 'atomic groups (?>…) are';
    } else if ((ch === '+' || ch === '*' || ch === '?' || ch === '}') && next === '+') {
      return `possessive quantifiers (${ch}+) are`;
    }
  }
  return undefined;
}
