import { describe, expect, it } from 'vitest';
import { compileSafeRegex, RegexLineMatcher, RegexWorkerStopped, SafeRegexError } from '../src/index.js';
import { hardRegexText } from '@switchboard/testkit';

const CATASTROPHIC = ['(a+)+$', '(.*.*)*~~~', '(a|aa)+$', '([a-zA-Z]+)*$', '^(\\w+\\s?)*$', '(x+x+)+y', '(\\d+|\\w+)*!!', '(a*)*b', '(.*a){20}$'];

describe('compileSafeRegex', () => {
  it('answers catastrophic-backtracking patterns on long hostile lines (linear time, no timing asserted)', () => {
    const hostile = `${'a'.repeat(5000)}!`;
    for (const p of CATASTROPHIC) expect(typeof compileSafeRegex(p).test(hostile)).toBe('boolean');
    expect(compileSafeRegex('(a+)+$').test('aaaa')).toBe(true);
    expect(compileSafeRegex('(a+)+$').test(hostile)).toBe(false);
  });

  it('keeps JavaScript syntax it shares with RE2, and translates \\u escapes', () => {
    expect(compileSafeRegex('^import \\w+ from').test('import x from "y"')).toBe(true);
    expect(compileSafeRegex('TODO|FIXME').test('a FIXME b')).toBe(true);
    expect(compileSafeRegex('(?<year>\\d{4})-\\d{2}').test('on 2026-12-01')).toBe(true);
    expect(compileSafeRegex('caf\\u00e9').test('café')).toBe(true);
    expect(compileSafeRegex('\\u{1F600}').test('smile 😀')).toBe(true);
    expect(compileSafeRegex('\\\\u0041').test('\\u0041')).toBe(true);
    expect(compileSafeRegex('hello', { caseInsensitive: true }).test('HeLLo')).toBe(true);
    expect(compileSafeRegex('a.b').test('a\nb')).toBe(false);
    expect(compileSafeRegex('a.b', { dotAll: true }).test('a\nb')).toBe(true);
  });

  it('names what RE2 cannot run', () => {
    const cases: Array<[string, RegExp]> = [
      ['(a)\\1', /backreferences \(\\1\)/],
      ['(?<x>a)\\k<x>', /named backreferences/],
      ['foo(?=bar)', /lookahead \(\?=/],
      ['foo(?!bar)', /lookahead \(\?!/],
      ['(?<=a)b', /lookbehind \(\?<=/],
      ['(?<!a)b', /lookbehind \(\?<!/],
      ['(?>a+)b', /atomic groups/],
      ['a++', /possessive/],
    ];
    for (const [p, msg] of cases) {
      const err = (() => {
        try {
          compileSafeRegex(p);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, p).toBeInstanceOf(SafeRegexError);
      expect((err as SafeRegexError).reason, p).toBe('unsupported');
      expect((err as Error).message, p).toMatch(msg);
      expect((err as Error).message, p).toContain('linear-time engine (RE2)');
    }
    // Inside a character class these are literals, and the error is a plain syntax error.
    expect(() => compileSafeRegex('[(?=]')).not.toThrow();
    expect(() => compileSafeRegex('(unclosed')).toThrow(/not a valid regular expression \(missing closing \)/);
  });

  it('bounds the pattern length and names the key', () => {
    expect(() => compileSafeRegex('a'.repeat(11), { maxLength: 10, maxLengthKey: 'limits.regexMaxLength' })).toThrow(
      /11 characters long; the limit is 10 \(limits\.regexMaxLength\)/,
    );
    expect(compileSafeRegex('a'.repeat(10), { maxLength: 10 }).test('aaaaaaaaaa')).toBe(true);
  });
});

describe('RegexLineMatcher', () => {
  it('returns matching line indexes from the worker, up to the limit, dropping a trailing \\r', async () => {
    const m = new RegexLineMatcher(compileSafeRegex('^x+$'));
    try {
      expect(await m.matchLines('x\r\ny\nxx\nxxx', 10)).toEqual([0, 2, 3]);
      expect(await m.matchLines('x\nx\nx', 2)).toEqual([0, 1]);
    } finally {
      await m.close();
    }
  });

  it('terminates the worker at the deadline and says so', async () => {
    const stops: string[] = [];
    const m = new RegexLineMatcher(compileSafeRegex('(a|b)*a(a|b){900}$'), { deadlineMs: 200, onTerminated: (why) => stops.push(why) });
    const text = hardText();
    const err = await m.matchLines(text, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegexWorkerStopped);
    expect(err).toMatchObject({ why: 'deadline', message: expect.stringContaining('200 ms') });
    expect(stops).toEqual(['deadline']);
    // Once stopped, the matcher stays stopped.
    await expect(m.matchLines('a', 1)).rejects.toBeInstanceOf(RegexWorkerStopped);
  });

  it('reports a worker that fails (here: cannot compile what it was given) as crashed, without an uncaught error', async () => {
    const stops: string[] = [];
    const broken = { source: '(', engine: { source: '(', flags: 0 }, test: () => false };
    const m = new RegexLineMatcher(broken, { deadlineMs: 60_000, onTerminated: (why) => stops.push(why) });
    const err = await m.matchLines('x', 10).catch((e: unknown) => e);
    expect(err).toMatchObject({ why: 'crashed' });
    expect(stops).toEqual(['crashed']);
  });

  it('terminates the worker when the signal aborts', async () => {
    const ac = new AbortController();
    const stops: string[] = [];
    const m = new RegexLineMatcher(compileSafeRegex('(a|b)*a(a|b){900}$'), { deadlineMs: 60_000, signal: ac.signal, onTerminated: (why) => stops.push(why) });
    const text = hardText();
    const pending = m.matchLines(text, 10).catch((e: unknown) => e);
    ac.abort();
    expect(await pending).toMatchObject({ why: 'aborted' });
    expect(stops).toEqual(['aborted']);
  });
});

const hardText = () => hardRegexText();
