#!/usr/bin/env node
/**
 * Dependency check (issue 12 item 7): every package.json matches the imports of its package.
 *
 * For each workspace package it reads the import specifiers of `src/` and `test/` (TypeScript's
 * own pre-processor: `import`, `export … from`, `import()`, `require()`, type-only imports
 * included) and fails when
 * - `src/` imports a package that `dependencies` (or `peerDependencies` / `optionalDependencies`)
 *   does not declare;
 * - `test/` imports a package declared neither there nor in `devDependencies` (the root's
 *   `devDependencies`, the shared test tooling such as vitest, also count for tests);
 * - a declared dependency is imported by nothing (a `dependencies` entry used only by tests
 *   belongs in `devDependencies`); `@types/x` counts as used when `x` is, `@types/node` always;
 * - `main`, `types`, `bin` or an `exports` target names a file that neither exists nor has a
 *   source under `src/` that builds to it.
 * The root package (its `test/`, `scripts/`, `bench/`) is checked like a package's tests; it may
 * import workspace packages without declaring them. A package that loads something by name
 * rather than by import (a pino transport, say) lists it in `"switchboard": { "loadedByName": [...] }`
 * of its package.json.
 *
 * Usage: `node scripts/check-deps.mjs [root]`; exits 1 and prints one line per problem.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const SOURCE_EXT = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, m.split('/')[0]]));

/** The package name of a bare specifier (`@scope/name/sub` → `@scope/name`), or null for a relative path, a URL or a builtin. */
export function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || /^[a-z]+:/i.test(specifier)) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return BUILTINS.has(name) ? null : name;
}

/** Import specifiers of one source text. */
export function importsOf(text) {
  const info = ts.preProcessFile(text, true, true);
  return [...info.importedFiles.map((f) => f.fileName), ...info.typeReferenceDirectives.map((f) => `@types/${f.fileName}`)];
}

function filesUnder(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, out);
    else if (SOURCE_EXT.test(entry.name)) out.push(path);
  }
  return out;
}

/** Package name → files (relative to `root`) that import it. */
function importersIn(root, dirs) {
  const found = new Map();
  for (const dir of dirs) {
    for (const file of filesUnder(dir)) {
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const name = packageOf(spec);
        if (name === null) continue;
        if (!found.has(name)) found.set(name, []);
        found.get(name).push(relative(root, file));
      }
    }
  }
  return found;
}

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const keys = (record) => Object.keys(record ?? {});

/** Whether a `main`/`types`/`bin`/`exports` target exists, or would after a build (`dist/x.js` ← `src/x.ts`). */
function targetExists(pkgDir, target) {
  const path = join(pkgDir, target);
  if (existsSync(path)) return true;
  const m = /^(?:\.\/)?dist\/(.+?)(\.d)?\.(js|ts|mjs|cjs)$/.exec(target);
  if (!m) return false;
  return ['ts', 'mts', 'cts', 'tsx', 'js', 'mjs'].some((ext) => existsSync(join(pkgDir, 'src', `${m[1]}.${ext}`)));
}

function exportTargets(exp) {
  if (typeof exp === 'string') return [exp];
  if (!exp || typeof exp !== 'object') return [];
  return Object.values(exp).flatMap(exportTargets);
}

function usedByName(name, imported) {
  if (imported.has(name)) return true;
  if (name === '@types/node') return true;
  if (name.startsWith('@types/')) {
    const bare = name.slice('@types/'.length);
    const real = bare.includes('__') ? `@${bare.replace('__', '/')}` : bare;
    return imported.has(real) || imported.has(name);
  }
  return false;
}

/** Every problem of the workspace at `root`, one line each (empty when the check passes). */
export function checkDeps(root) {
  const rootPkg = readJson(join(root, 'package.json'));
  const workspaces = Array.isArray(rootPkg.workspaces) ? rootPkg.workspaces : (rootPkg.workspaces?.packages ?? []);
  const pkgDirs = workspaces.map((w) => join(root, w)).filter((d) => existsSync(join(d, 'package.json')));
  const workspaceNames = new Set(pkgDirs.map((d) => readJson(join(d, 'package.json')).name));
  const rootDev = new Set([...keys(rootPkg.devDependencies), ...keys(rootPkg.dependencies)]);
  const problems = [];

  for (const dir of pkgDirs) {
    const pkg = readJson(join(dir, 'package.json'));
    const where = relative(root, join(dir, 'package.json'));
    const runtime = new Set([...keys(pkg.dependencies), ...keys(pkg.peerDependencies), ...keys(pkg.optionalDependencies)]);
    const dev = new Set(keys(pkg.devDependencies));
    const byName = new Set(pkg.switchboard?.loadedByName ?? []);
    const src = importersIn(root, [join(dir, 'src')]);
    const test = importersIn(root, [join(dir, 'test')]);
    for (const [name, files] of src) {
      if (name === pkg.name || runtime.has(name)) continue;
      problems.push(`${where}: ${name} is imported by ${files[0]} but not in dependencies${dev.has(name) ? ' (it is a devDependency)' : ''}`);
    }
    for (const [name, files] of test) {
      if (name === pkg.name || runtime.has(name) || dev.has(name) || rootDev.has(name)) continue;
      problems.push(`${where}: ${name} is imported by ${files[0]} but not in devDependencies`);
    }
    for (const name of keys(pkg.dependencies)) {
      if (usedByName(name, src) || byName.has(name)) continue;
      problems.push(
        usedByName(name, test)
          ? `${where}: ${name} is in dependencies but only tests import it (move it to devDependencies)`
          : `${where}: ${name} is in dependencies but nothing imports it`,
      );
    }
    for (const name of dev) {
      if (usedByName(name, test) || usedByName(name, src) || byName.has(name)) continue;
      problems.push(`${where}: ${name} is in devDependencies but nothing imports it`);
    }
    const targets = [
      ...(pkg.main ? [['main', pkg.main]] : []),
      ...(pkg.types ? [['types', pkg.types]] : []),
      ...(typeof pkg.bin === 'string' ? [['bin', pkg.bin]] : Object.entries(pkg.bin ?? {}).map(([k, v]) => [`bin.${k}`, v])),
      ...exportTargets(pkg.exports).map((t) => ['exports', t]),
    ];
    for (const [field, target] of targets) {
      if (!targetExists(dir, target)) problems.push(`${where}: ${field} names ${target}, which does not exist (nor a source that builds to it)`);
    }
  }

  const rootImports = importersIn(
    root,
    ['test', 'scripts', 'bench'].map((d) => join(root, d)),
  );
  for (const [name, files] of rootImports) {
    if (rootDev.has(name) || workspaceNames.has(name)) continue;
    problems.push(`package.json: ${name} is imported by ${files[0]} but not in the root devDependencies`);
  }
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const problems = checkDeps(root);
  for (const p of problems) console.error(`check-deps: ${p}`);
  if (problems.length > 0) {
    console.error(`check-deps: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log('check-deps: every package.json matches its imports');
}
