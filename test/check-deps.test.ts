import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDeps, importsOf, packageOf } from '../scripts/check-deps.mjs';

// scripts/check-deps.mjs (run by `npm run lint`) over tiny fixture workspaces in a temp dir.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Files = Record<string, string | object>;

/** A workspace with one package `pkgs/a` (plus `extra` files); returns its root. */
function workspace(pkg: object, files: Files, extra: Files = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'check-deps-'));
  dirs.push(root);
  const all: Files = {
    'package.json': { name: 'root', private: true, workspaces: ['pkgs/a'], devDependencies: { vitest: '4.1.12' } },
    'pkgs/a/package.json': { name: '@x/a', version: '0.1.0', ...pkg },
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`pkgs/a/${k}`, v])),
    ...extra,
  };
  for (const [path, content] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return root;
}

describe('check-deps', () => {
  it('passes a package whose declarations match its imports', () => {
    const root = workspace(
      { main: 'dist/index.js', dependencies: { zod: '4.6.7', pino: '10.4.0' }, devDependencies: { 'fast-check': '4.11.0' } },
      {
        'src/index.ts':
          "import { z } from 'zod';\nimport type { Logger } from 'pino';\nimport { readFileSync } from 'node:fs';\nimport path from 'path';\nimport { b } from './b.js';\n",
        'test/a.test.ts': "import { it } from 'vitest';\nimport fc from 'fast-check';\nimport { z } from 'zod';\nimport { a } from '@x/a';\n",
      },
    );
    expect(checkDeps(root)).toEqual([]);
  });

  it('fails on an import src does not declare, and on a devDependency used by src', () => {
    const root = workspace(
      { dependencies: {}, devDependencies: { ws: '8.23.0' } },
      { 'src/index.ts': "export { x } from 'pino';\nconst y = await import('@scope/lib/sub');\nimport WebSocket from 'ws';\n" },
    );
    expect(checkDeps(root)).toEqual([
      'pkgs/a/package.json: pino is imported by pkgs/a/src/index.ts but not in dependencies',
      'pkgs/a/package.json: @scope/lib is imported by pkgs/a/src/index.ts but not in dependencies',
      'pkgs/a/package.json: ws is imported by pkgs/a/src/index.ts but not in dependencies (it is a devDependency)',
    ]);
  });

  it('fails on an undeclared test import, but takes the root devDependencies for tests', () => {
    const root = workspace({}, { 'test/a.test.ts': "import { it } from 'vitest';\nimport yaml from 'yaml';\n" });
    expect(checkDeps(root)).toEqual(['pkgs/a/package.json: yaml is imported by pkgs/a/test/a.test.ts but not in devDependencies']);
  });

  it('fails on declared-unused dependencies, and on runtime dependencies only tests use', () => {
    const root = workspace(
      {
        dependencies: { '@slack/bolt': '5.1.0', zod: '4.6.7', 'better-sqlite3': '12.11.1', '@types/better-sqlite3': '7.6.13' },
        devDependencies: { grammy: '1.46.0' },
      },
      { 'src/index.ts': "import Database from 'better-sqlite3';\n", 'test/a.test.ts': "import { z } from 'zod';\n" },
    );
    expect(checkDeps(root)).toEqual([
      'pkgs/a/package.json: @slack/bolt is in dependencies but nothing imports it',
      'pkgs/a/package.json: zod is in dependencies but only tests import it (move it to devDependencies)',
      'pkgs/a/package.json: grammy is in devDependencies but nothing imports it',
    ]);
  });

  it('accepts what the package lists as loaded by name', () => {
    const root = workspace({ dependencies: { 'pino-pretty': '13.0.0' }, switchboard: { loadedByName: ['pino-pretty'] } }, { 'src/index.ts': 'export {};\n' });
    expect(checkDeps(root)).toEqual([]);
  });

  it('fails when main, types, bin or exports name a file that neither exists nor builds from src', () => {
    const root = workspace(
      {
        main: 'dist/index.js',
        types: 'dist/index.d.ts',
        bin: { tool: 'bin/tool.js' },
        exports: { '.': { default: './dist/index.js' }, './sub': './dist/sub.js' },
      },
      { 'src/sub.ts': 'export {};\n' },
    );
    expect(checkDeps(root)).toEqual([
      'pkgs/a/package.json: main names dist/index.js, which does not exist (nor a source that builds to it)',
      'pkgs/a/package.json: types names dist/index.d.ts, which does not exist (nor a source that builds to it)',
      'pkgs/a/package.json: bin.tool names bin/tool.js, which does not exist (nor a source that builds to it)',
      'pkgs/a/package.json: exports names ./dist/index.js, which does not exist (nor a source that builds to it)',
    ]);
  });

  it("checks the root's test, scripts and bench imports; workspace packages need no declaration there", () => {
    const root = workspace({}, {}, { 'test/x.test.ts': "import '@x/a';\nimport { it } from 'vitest';\n", 'bench/run.mjs': "import WebSocket from 'ws';\n" });
    expect(checkDeps(root)).toEqual(['package.json: ws is imported by bench/run.mjs but not in the root devDependencies']);
  });

  it('reads specifiers the way TypeScript does and maps them to package names', () => {
    expect(importsOf("import a from 'a';\nexport * from 'b';\nconst c = require('c');\nawait import('d');\n// import 'e';\n")).toEqual(['a', 'b', 'c', 'd']);
    expect(packageOf('@scope/name/deep/path.js')).toBe('@scope/name');
    expect(packageOf('lodash/fp')).toBe('lodash');
    for (const s of ['./x.js', '../y', '/abs', 'node:fs', 'fs', 'fs/promises', 'https://x']) expect(packageOf(s)).toBeNull();
  });
});
