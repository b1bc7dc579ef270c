import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { ChannelCursors } from '@switchboard/core';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { legacyOffsetFile, OffsetStore, parseLegacyOffset, parseOffsetCursor } from '../src/offset-store.js';

const root = mkdtempSync(join(tmpdir(), 'swb-offset-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let seq = 0;
/** A fresh account: its own cursors (the gateway's store is tested by the e2e tests), data dir and log. */
function account() {
  const id = `acct${++seq}`;
  const dir = join(root, id);
  const lines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const rows = new Map<string, string>();
  const cursors: ChannelCursors = {
    get: async (name) => rows.get(name) ?? null,
    set: async (name, value) => void rows.set(name, value),
  };
  const file = legacyOffsetFile(dir, id);
  return { id, dir, file, cursors, lines, store: new OffsetStore(cursors, file, log) };
}

function withFile(text: string) {
  const a = account();
  mkdirSync(a.dir, { recursive: true });
  writeFileSync(a.file, text);
  return a;
}

/** Hostile legacy file contents: any text, any JSON, and near-misses of `{"offset": n}`. */
const hostile = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.json({ maxDepth: 3 }),
  fc.double().map((offset) => JSON.stringify({ offset })),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => `{"offset":${n}}`),
  fc.constantFrom(
    '{"__proto__":{"offset":5}}',
    '{"constructor":{"prototype":{"offset":5}}}',
    '{"offset":"12"}',
    '{"offset":null}',
    '{"offset":-1}',
    '{"offset":1e300}',
    '{"offset":9007199254740992}',
    '[{"offset":1}]',
    'null',
    '',
    `{"offset":1,"pad":"${'x'.repeat(2000)}"}`,
  ),
);

describe('telegram offset store: the legacy file is imported once, validated', () => {
  it('imports a valid file into the cursor row and retires the file; the next load reads the row', async () => {
    const a = withFile('{"offset":42}\n');
    expect(await a.store.load()).toBe(42);
    expect(await a.cursors.get('offset')).toBe('42');
    expect(existsSync(a.file)).toBe(false);
    expect(readFileSync(`${a.file}.imported`, 'utf8')).toBe('{"offset":42}\n');
    expect(a.lines.some((l) => l.includes('"event":"telegram_offset_imported"'))).toBe(true);
    await a.store.save(43);
    writeFileSync(a.file, '{"offset":1}');
    expect(await a.store.load()).toBe(43);
    expect(existsSync(a.file)).toBe(false);
  });

  it('without a row or a file there is no offset and nothing is written', async () => {
    const a = account();
    expect(await a.store.load()).toBeUndefined();
    expect(await a.cursors.get('offset')).toBeNull();
    expect(existsSync(a.dir)).toBe(false);
  });

  it('ignores a stored cursor value that is not an offset, with a warning', async () => {
    const a = account();
    await a.cursors.set('offset', '-5');
    expect(await a.store.load()).toBeUndefined();
    expect(a.lines.some((l) => l.includes('"event":"telegram_offset_invalid"'))).toBe(true);
  });

  it('property: any file content loads to nothing or to exactly the valid offset it holds; never throws; the file never stays', async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (text) => {
        const a = withFile(text);
        const expected = parseLegacyOffset(text);
        const got = await a.store.load();
        if (expected.ok && text.length <= 1024) {
          expect(got).toBe(expected.offset);
          expect(await a.cursors.get('offset')).toBe(String(expected.offset));
        } else {
          expect(got).toBeUndefined();
          expect(await a.cursors.get('offset')).toBeNull();
          expect(a.lines.some((l) => l.includes('"event":"telegram_offset_import_ignored"'))).toBe(true);
        }
        if (got !== undefined) expect(Number.isSafeInteger(got) && got >= 0).toBe(true);
        expect(existsSync(a.file)).toBe(false);
        // Imported (or ignored) once: the file is not read again.
        expect(await a.store.load()).toBe(got);
      }),
      { numRuns: 200 },
    );
  });

  it('property: parsers of a stored value and of a file are total and accept only non-negative safe integers', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer().map(String), fc.double().map(String)), (v) => {
        const n = parseOffsetCursor(v);
        if (n !== undefined) expect(Number.isSafeInteger(n) && n >= 0 && String(n) === v.replace(/^0+(?=\d)/, '')).toBe(true);
      }),
    );
    fc.assert(
      fc.property(hostile, (text) => {
        const r = parseLegacyOffset(text);
        if (r.ok) expect(Number.isSafeInteger(r.offset) && r.offset >= 0).toBe(true);
      }),
    );
    expect(parseLegacyOffset('{"__proto__":{"offset":5}}').ok).toBe(false);
  });
});
