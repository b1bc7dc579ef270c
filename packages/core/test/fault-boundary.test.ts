import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AttemptCounter, describeThrown, FaultBoundary, previewText } from '../src/index.js';

const silent = pino({ level: 'silent' });

describe('describeThrown', () => {
  it('is total: any value, hostile objects included', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('no');
        },
        getPrototypeOf: () => {
          throw new Error('no');
        },
      },
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.string().map((s) => new Error(s)),
        ),
        (v) => {
          expect(typeof describeThrown(v)).toBe('string');
        },
      ),
    );
    // (fast-check cannot print a hostile proxy, so it is checked outside the property.)
    expect(describeThrown(hostile)).toBe('(an error that cannot be described)');
    expect(describeThrown(undefined)).toBe('(undefined)');
    expect(describeThrown(Object.assign(new Error('boom'), { code: 'ECONNRESET' }))).toBe('boom (ECONNRESET)');
  });
});

describe('FaultBoundary', () => {
  it('catches, counts and summarises failures; never rejects, even with a throwing describer', async () => {
    const b = new FaultBoundary(silent, () => {
      throw new Error('describer broke');
    });
    expect(await b.run({ channel: 'x:main', task: 'typing', conversation: '7' }, () => Promise.reject(new Error('nope')))).toBeUndefined();
    expect(await b.run({ channel: 'x:main', task: 'ok' }, () => 5)).toBe(5);
    await b.spawn({ channel: 'x:main', task: 'render' }, async () => {
      throw 'a string';
    });
    expect(b.failures).toBe(2);
    expect(b.summary()).toBe('2 task failures, last: render: a string');
  });
});

describe('AttemptCounter', () => {
  it('reports exhaustion at max and forgets the oldest keys past its capacity', () => {
    const c = new AttemptCounter(3, 2);
    expect(c.fail('a')).toEqual({ attempts: 1, exhausted: false });
    c.fail('a');
    expect(c.fail('a')).toEqual({ attempts: 3, exhausted: true });
    c.fail('b');
    c.fail('c');
    expect(c.fail('a')).toEqual({ attempts: 1, exhausted: false });
  });

  it('previewText keeps one short line', () => {
    expect(previewText('a\n b')).toBe('a b');
    expect(previewText('x'.repeat(200), 10)).toBe('xxxxxxxxxx… (200 characters)');
  });
});
