import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@switchboard/testkit';

// Issue 12, acceptance 3 (the environment part): only the CLI reads the process environment;
// everything below it takes resolved values. Packages (testkit excepted) never reach into the app.

const root = repoRoot();

/** Every `.ts` file under `dir`, repo-relative. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

const PACKAGE_SOURCES = readdirSync(join(root, 'packages'))
  .filter((name) => name !== 'testkit')
  .flatMap((name) => sources(join('packages', name, 'src')));
const GATEWAY_SOURCES = sources('apps/gateway/src');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('who reads process.env', () => {
  it('in apps/gateway/src, cli.ts only', () => {
    expect(GATEWAY_SOURCES.length).toBeGreaterThan(10);
    expect(GATEWAY_SOURCES.filter((f) => /\bprocess\.env\b/u.test(read(f)))).toEqual(['apps/gateway/src/cli.ts']);
  });

  it('no file under packages/*/src (testkit excepted)', () => {
    expect(PACKAGE_SOURCES).toContain('packages/core/src/policy/service.ts');
    expect(PACKAGE_SOURCES.filter((f) => /\bprocess\.env\b/u.test(read(f)))).toEqual([]);
  });

  it('no package (testkit excepted) imports the gateway app or its config type', () => {
    const reaching = PACKAGE_SOURCES.filter((f) => /from\s+['"](?:@switchboard\/gateway|[./]+\/apps\/gateway)[^'"]*['"]/u.test(read(f)));
    expect(reaching).toEqual([]);
  });
});
