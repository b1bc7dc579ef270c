import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, configSecrets, parseConfig } from '../src/config.js';
import { configFailure, parseTestConfig as parse } from './config-fixture.js';

const PASSWORD = 'pw-Zq9!canary';
const URL_WITH_PASSWORD = `postgres://switchboard:${encodeURIComponent(PASSWORD)}@db.internal:5432/switchboard`;

describe('storage', () => {
  it('defaults: the embedded SQLite database, with the pool and timer defaults', () => {
    expect(parse('{}').storage).toEqual({
      kind: 'sqlite',
      url: '',
      pool: { max: 10 },
      statementTimeout: 30_000,
      connectionTimeout: 5_000,
      healthInterval: 5_000,
      fanout: { retention: 120_000, reconnectDelay: 1_000 },
    });
  });

  it('takes a postgres:// or postgresql:// URL, the pool size and durations', () => {
    const s = parse(
      `{ storage: { kind: "postgres", url: "${URL_WITH_PASSWORD}", pool: { max: 4 }, statementTimeout: "2s", connectionTimeout: "1s", healthInterval: "250ms" } }`,
    ).storage;
    expect(s).toEqual({
      kind: 'postgres',
      url: URL_WITH_PASSWORD,
      pool: { max: 4 },
      statementTimeout: 2000,
      connectionTimeout: 1000,
      healthInterval: 250,
      fanout: { retention: 120_000, reconnectDelay: 1_000 },
    });
    const fanout = parse('{ storage: { fanout: { retention: "30s", reconnectDelay: "500ms" } } }').storage.fanout;
    expect(fanout).toEqual({ retention: 30_000, reconnectDelay: 500 });
    expect(() => parse('{ storage: { fanout: { retention: "10ms" } } }')).toThrow(/storage\.fanout\.retention/);
    expect(() => parse('{ storage: { fanout: { nope: 1 } } }')).toThrow(/storage\.fanout/);
    expect(parse('{ storage: { kind: "postgres", url: "postgresql://localhost/db" } }').storage.url).toBe('postgresql://localhost/db');
  });

  it('DATABASE_URL fills an empty url for postgres; for sqlite a set DATABASE_URL (or url) is no error', () => {
    expect(parseConfig('{ storage: { kind: "postgres" } }', { DATABASE_URL: URL_WITH_PASSWORD }, '/srv').storage.url).toBe(URL_WITH_PASSWORD);
    expect(parseConfig('{ storage: { kind: "postgres", url: "${DATABASE_URL:-}" } }', { DATABASE_URL: URL_WITH_PASSWORD }, '/srv').storage.url).toBe(
      URL_WITH_PASSWORD,
    );
    expect(parseConfig('{ storage: { url: "${DATABASE_URL:-}" } }', { DATABASE_URL: 'not a url' }, '/srv').storage.kind).toBe('sqlite');
    expect(parseConfig('{}', { DATABASE_URL: URL_WITH_PASSWORD }, '/srv').storage).toMatchObject({ kind: 'sqlite', url: '' });
  });

  it.each([
    ['{ storage: { kind: "postgres" } }', /storage\.url: is required when storage\.kind is "postgres"/],
    ['{ storage: { kind: "postgres", url: "${DATABASE_URL:-}" } }', /storage\.url: is required/],
    ['{ storage: { kind: "postgres", url: "mysql://u:p@h/db" } }', /storage\.url: must start with postgres:\/\/ or postgresql:\/\//],
    ['{ storage: { kind: "postgres", url: "localhost:5432" } }', /storage\.url: must start with postgres:\/\//],
    ['{ storage: { kind: "postgres", url: "just words" } }', /storage\.url: is not a URL/],
    ['{ storage: { kind: "mysql" } }', /storage\.kind: /],
    ['{ storage: { pool: { max: 0 } } }', /storage\.pool\.max: /],
    ['{ storage: { statementTimeout: "soon" } }', /storage\.statementTimeout: expected a duration/],
    ['{ storage: { healthInterval: "10ms" } }', /storage\.healthInterval: must be at least 200ms/],
    ['{ storage: { connectionTimeout: "2h" } }', /storage\.connectionTimeout: must be at most 10min/],
    ['{ storage: { file: "x.db" } }', /unknown key\(s\) "storage\.file"/],
    ['{ storage: [] }', /storage: /],
  ])('refuses %s, naming the key', (text, message) => {
    expect(configFailure(text)).toMatch(message);
  });

  it('a refused URL never echoes its password', () => {
    for (const url of [`mysql://u:${PASSWORD}@h/db`, `postgres://u:${PASSWORD}`, `${PASSWORD}`, `http://u:${PASSWORD}@h/`]) {
      const message = configFailure(JSON.stringify({ storage: { kind: 'postgres', url } }));
      expect(message).toMatch(/storage\.url/);
      expect(message).not.toContain(PASSWORD);
      expect(message).not.toContain(encodeURIComponent(PASSWORD));
    }
  });

  it('the password (as written and decoded) is a config secret, so the logs scrub it', () => {
    const cfg = parse(`{ storage: { kind: "postgres", url: "${URL_WITH_PASSWORD}" } }`);
    expect(configSecrets(cfg)).toEqual(expect.arrayContaining([PASSWORD, encodeURIComponent(PASSWORD)]));
  });

  it('hostile shapes are a ConfigError naming storage, never a crash; what is accepted is well-formed', () => {
    const hostile = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          kind: fc.oneof(fc.constantFrom('sqlite', 'postgres'), fc.jsonValue()),
          url: fc.oneof(fc.webUrl(), fc.constantFrom('postgres://h/db', 'postgresql://u:p@h:1/d', ''), fc.string({ maxLength: 5000 }), fc.jsonValue()),
          pool: fc.oneof(fc.record({ max: fc.oneof(fc.integer({ min: -5, max: 5000 }), fc.jsonValue()) }), fc.jsonValue()),
          statementTimeout: fc.oneof(fc.integer({ min: -1, max: 10 ** 9 }), fc.string(), fc.jsonValue()),
          healthInterval: fc.oneof(fc.integer({ min: -1, max: 10 ** 9 }), fc.string()),
          __proto__: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(hostile, (value) => {
        try {
          const s = parse(JSON.stringify({ storage: value })).storage;
          expect(['sqlite', 'postgres']).toContain(s.kind);
          if (s.kind === 'postgres') expect(new URL(s.url).protocol).toMatch(/^postgres(ql)?:$/);
          expect(s.pool.max).toBeGreaterThanOrEqual(1);
          expect(s.healthInterval).toBeGreaterThanOrEqual(200);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as Error).message).toMatch(/storage/);
        }
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });
});
