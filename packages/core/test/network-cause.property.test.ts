import fc from 'fast-check';
import { hostileThrownValues } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { describeConfigSource, describeNetworkCause } from '../src/index.js';

const numRuns = Number(process.env.SWB_PROPERTY_RUNS ?? 300);

/** Values fast-check cannot generate (it cannot print proxies): throwing getters, hostile and revoked proxies, cycles. */
const HOSTILE = hostileThrownValues();

/** A Bot API token: `<bot id>:<35 characters>`. */
const token = fc.tuple(fc.integer({ min: 100_000, max: 9_999_999_999 }), fc.stringMatching(/^[A-Za-z0-9_-]{35}$/)).map(([id, secret]) => `${id}:${secret}`);

/** URLs that carry the token (path, userinfo, query), as fetch and its libraries print them. */
const urlWith = (t: string) =>
  fc.constantFrom(
    `https://api.telegram.org/bot${t}/getMe`,
    `http://127.0.0.1:8081/bot${t}/sendMessage?chat_id=1`,
    `https://user:${t}@slack.com/api/auth.test`,
    `https://slack.com/api/auth.test?token=${t}`,
    `wss://wss-primary.slack.com/link/?ticket=${t}&app_id=A1`,
  );

/** Any text around a URL: it may be glued to the URL or separated by any whitespace. */
const around = fc.string({ maxLength: 40 });

/** An error shape that carries a token URL somewhere: its message, name, cause (as a string or object), the cause's code or message, a nested cause. */
const tokenError = token.chain((t) =>
  fc.record({ t: fc.constant(t), text: fc.tuple(around, urlWith(t), around).map(([a, u, b]) => `${a}${u}${b}`) }).chain(({ t: tok, text }) =>
    fc.record({
      token: fc.constant(tok),
      url: fc.oneof(urlWith(tok), fc.constant(text), fc.constant('not a url')),
      err: fc.oneof(
        fc.constant<unknown>(text),
        fc.constant<unknown>(new Error(text)),
        fc.constant<unknown>(new TypeError('fetch failed', { cause: text })),
        fc.constant<unknown>(new TypeError('fetch failed', { cause: { code: text } })),
        fc.constant<unknown>(new TypeError('fetch failed', { cause: { message: text } })),
        fc.constant<unknown>(new TypeError('fetch failed', { cause: new Error(text) })),
        fc.constant<unknown>(new TypeError(text, { cause: new Error(text, { cause: { code: 'ECONNREFUSED', message: text } }) })),
        fc.anything().map((extra) => Object.assign(new Error(text), { name: text, extra, cause: { message: text, code: extra, url: text } })),
        fc.anything().map((code) => ({ message: text, cause: { code, message: text } })),
      ),
    }),
  ),
);

/** Arbitrary thrown values: anything, and error-like records with arbitrary fields. */
const anyThrown = fc.oneof(
  fc.anything(),
  fc.record({ name: fc.anything(), message: fc.anything(), code: fc.anything(), cause: fc.anything() }, { requiredKeys: [] }),
  fc
    .record({
      name: fc.oneof(fc.constant('TimeoutError'), fc.string()),
      cause: fc.oneof(fc.anything(), fc.record({ code: fc.anything(), message: fc.anything() })),
    })
    .map(({ name, cause }) => Object.assign(new Error('fetch failed', { cause }), { name })),
);

describe('describeNetworkCause', () => {
  it('names the cause and the host, the way fetch fails', () => {
    expect(describeNetworkCause(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), 'http://127.0.0.1:8081/x')).toBe(
      'ECONNREFUSED 127.0.0.1:8081',
    );
    expect(describeNetworkCause(new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'https://slack.com/api/auth.test')).toBe(
      'timed out slack.com',
    );
    expect(describeNetworkCause(new TypeError('fetch failed', { cause: new Error('other side closed') }), 'https://api.telegram.org')).toBe(
      'other side closed api.telegram.org',
    );
    expect(describeNetworkCause(new TypeError('fetch failed', { cause: { message: 'x'.repeat(300) } }), 'https://h.example')).toBe(
      `${'x'.repeat(100)} h.example`,
    );
    expect(describeNetworkCause(new TypeError('fetch failed'), 'https://api.telegram.org')).toBe('request failed api.telegram.org');
    expect(describeNetworkCause('boom', 'not a url')).toBe('request failed the configured host');
  });

  it('drops URLs and paths read from the error, and never shows more of the URL than its host', () => {
    const t = '123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr';
    const err = new TypeError('fetch failed', { cause: new Error(`request to https://api.telegram.org/bot${t}/getMe failed, reason: reset`) });
    expect(describeNetworkCause(err, `https://user:pw@api.telegram.org/bot${t}/getMe`)).toBe('request to [url] failed, reason: reset api.telegram.org');
  });

  it('never throws and always ends with the host, for any thrown value', () => {
    for (const err of HOSTILE) expect(describeNetworkCause(err, 'https://api.telegram.org/botX/getMe')).toMatch(/ api\.telegram\.org$/);
    fc.assert(
      fc.property(anyThrown, fc.oneof(fc.string(), fc.webUrl()), (err, url) => {
        const out = describeNetworkCause(err, url);
        expect(typeof out).toBe('string');
        const host = (() => {
          try {
            return new URL(url).host;
          } catch {
            return 'the configured host';
          }
        })();
        expect(out.endsWith(` ${host}`)).toBe(true);
      }),
      { numRuns },
    );
  });

  it('never contains a token carried by a URL in the message, the name, the cause or the URL itself', () => {
    fc.assert(
      fc.property(tokenError, ({ token: t, url, err }) => {
        const out = describeNetworkCause(err, url);
        expect(out).not.toContain(t);
        expect(out).not.toContain(t.split(':')[1]);
      }),
      { numRuns },
    );
    for (const cause of HOSTILE) {
      const t = '987654321:ZZyyXXwwVVuuTTssRRqqPPooNNmmLLkkJJi';
      const err = new TypeError(`https://api.telegram.org/bot${t}/getMe`, { cause });
      expect(describeNetworkCause(err, `https://api.telegram.org/bot${t}/getMe`)).not.toContain(t);
    }
  });
});

describe('describeConfigSource', () => {
  it('names the key and the variables it came from', () => {
    expect(describeConfigSource({ key: 'channels.slack.accounts.team.botToken', variables: [] })).toBe('channels.slack.accounts.team.botToken');
    expect(describeConfigSource({ key: 'channels.telegram.accounts.main.token', variables: ['A', 'B'] })).toBe(
      'channels.telegram.accounts.main.token (from $A, $B)',
    );
  });
});
