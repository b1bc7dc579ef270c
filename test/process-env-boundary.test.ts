import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@switchboard/testkit';

// Issue 12, acceptance 3: only the CLI reads the process environment; everything below it takes
// resolved values. Packages (testkit excepted) never reach into the app. In the app only config,
// CLI and wiring import the config type, and the domain services live in core, not in the app.

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

interface ImportOf {
  from: string;
  /** Names imported as values. */
  values: string[];
  /** Names imported as types only (`import type { … }` or `type X` specifiers). */
  types: string[];
}

/** The static and dynamic imports of a source file, with the names each brings in. */
function imports(file: string): ImportOf[] {
  const text = read(file);
  const out: ImportOf[] = [];
  for (const m of text.matchAll(/\bimport\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gu)) {
    const typeOnly = m[1] !== undefined;
    const clause = m[2] ?? '';
    const entry: ImportOf = { from: m[3]!, values: [], types: [] };
    const named = (/\{([^}]*)\}/u.exec(clause)?.[1] ?? '').split(',').map((n) => n.trim());
    const bare = /^(\w+)\s*(?:,|$)/u.exec(clause)?.[1];
    for (const specifier of [...named, ...(bare ? [bare] : [])].filter((n) => n.length > 0)) {
      const name = specifier
        .replace(/^type\s+/u, '')
        .split(/\s+as\s+/u)[0]!
        .trim();
      (typeOnly || specifier.startsWith('type ') ? entry.types : entry.values).push(name);
    }
    out.push(entry);
  }
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/gu)) out.push({ from: m[1]!, values: [], types: [] });
  return out;
}

/** The app's config modules: the config schema and type, the channels section's composition, and the holder of the config in force. */
const CONFIG_MODULE = /^(?:\.\.?\/)+(?:config|config-channels|live-config)\.js$/u;
/** Whether a file imports a config module, or the `Config` type from anywhere. */
const importsConfig = (file: string) => imports(file).some((i) => CONFIG_MODULE.test(i.from) || [...i.values, ...i.types].includes('Config'));

/**
 * Who in apps/gateway/src may import the config, by role. Everything else (the control API, the
 * HTTP edges, the auth limiter, tokens, channel contexts) takes resolved, typed values.
 */
const CONFIG_ROLES: ReadonlyArray<{ role: string; files: RegExp }> = [
  { role: 'config: the schema, its channels section, the live holder', files: /^apps\/gateway\/src\/(?:config|config-[a-z-]+|live-config)\.ts$/u },
  { role: 'resolvers at the edge: config → settings values built once (and on reload)', files: /^apps\/gateway\/src\/(?:[a-z]+-settings|channels)\.ts$/u },
  { role: 'CLI', files: /^apps\/gateway\/src\/cli(?:-[a-z-]+)?\.ts$/u },
  { role: 'doctor (a CLI command that checks a config)', files: /^apps\/gateway\/src\/doctor(?:-[a-z-]+)?\.ts$/u },
  { role: 'wiring: start-up and shutdown', files: /^apps\/gateway\/src\/(?:gateway\.ts|wiring\/[a-z-]+\.ts)$/u },
];

describe('who imports the config type in apps/gateway/src', () => {
  const importers = GATEWAY_SOURCES.filter(importsConfig);

  it('config, CLI and wiring only (the roles above)', () => {
    // The detection itself works: these are known importers.
    expect(importers).toEqual(expect.arrayContaining(['apps/gateway/src/cli.ts', 'apps/gateway/src/gateway.ts', 'apps/gateway/src/wiring/domain.ts']));
    const outside = importers.filter((f) => !CONFIG_ROLES.some((r) => r.files.test(f)));
    expect(outside).toEqual([]);
  });

  it('the control API (apps/gateway/src/api/**) imports no config', () => {
    const api = GATEWAY_SOURCES.filter((f) => f.startsWith('apps/gateway/src/api/'));
    expect(api.length).toBeGreaterThan(5);
    expect(api.filter(importsConfig)).toEqual([]);
    expect(api.filter((f) => imports(f).some((i) => /(?:^|\/)(?:config|config-channels|live-config)(?:\.js)?$/u.test(i.from)))).toEqual([]);
  });
});

describe('apps/gateway/src has no domain logic left', () => {
  const DOMAIN = ['BoundaryService', 'Router', 'PolicyService', 'CapabilityRegistry', 'TurnEngine', 'ApprovalBroker'] as const;

  it('no boundary, policy, registry, router, engine or approvals module in the app (the control API routes excepted)', () => {
    const domainModules = GATEWAY_SOURCES.filter((f) => !f.startsWith('apps/gateway/src/api/')).filter((f) =>
      /\/(?:boundary|policy|permissions|registry|router|engine|broker|approvals?)(?:\.ts$|\/)/u.test(f),
    );
    expect(domainModules).toEqual([]);
  });

  it('no gateway source defines a domain service', () => {
    const defining = GATEWAY_SOURCES.filter((f) => new RegExp(`\\b(?:class|function|interface)\\s+(?:${DOMAIN.join('|')})\\b`, 'u').test(read(f)));
    expect(defining).toEqual([]);
  });

  it('the wiring imports the gate, router, policy, registry, engine and broker from @switchboard/core and constructs them', () => {
    const fromCore = new Set(
      GATEWAY_SOURCES.flatMap((f) =>
        imports(f)
          .filter((i) => i.from === '@switchboard/core')
          .flatMap((i) => i.values),
      ),
    );
    const constructed = GATEWAY_SOURCES.map(read).join('\n');
    for (const name of DOMAIN) {
      expect(fromCore, name).toContain(name);
      expect(constructed, name).toMatch(new RegExp(`\\bnew ${name}\\(`, 'u'));
    }
  });
});
