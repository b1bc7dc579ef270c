import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  isSwbError,
  MODEL_ERROR_CODES,
  ModelError,
  type ModelErrorKind,
  RegexWorkerStopped,
  SafeRegexError,
  SWB_ERRORS,
  SwbError,
  SwbErrorCode,
} from '@switchboard/agent';
import * as core from '@switchboard/core';
import { repoRoot } from '@switchboard/testkit';
import { FileToolError, PathEscapeError } from '@switchboard/tools';
import { McpToolError } from '@switchboard/tools/mcp';
import { WebhookConfigError } from '@switchboard/channel-webhook';
import { ConfigError } from '../apps/gateway/src/config.js';
import { InstanceLockedError } from '../apps/gateway/src/instance-lock.js';
import { StartupError } from '../apps/gateway/src/startup-errors.js';

// Issue 12 item 6: one catalogue of SWB_E_* codes (packages/agent/src/errors.ts), documented in
// docs/errors.md, and no code spelled out anywhere else in source.

const root = repoRoot();
const CATALOGUE_FILE = 'packages/agent/src/errors.ts';

/** `## SWB_E_X` headings of the errors page, each with its `Retryable: yes|no` line. */
function documented(page: string): Map<string, boolean | undefined> {
  const out = new Map<string, boolean | undefined>();
  const sections = page.split(/^## /m).slice(1);
  for (const section of sections) {
    const heading = section.slice(0, section.indexOf('\n')).trim();
    if (!/^SWB_E_[A-Z_]+$/.test(heading)) continue;
    const r = /^Retryable: (yes|no)$/m.exec(section);
    out.set(heading, r ? r[1] === 'yes' : undefined);
  }
  return out;
}

/** What is wrong between the catalogue and the page: missing, stale, or a different retryable answer. */
function pageProblems(page: string, catalogue: ReadonlyMap<string, { retryable: boolean }>): string[] {
  const docs = documented(page);
  const problems: string[] = [];
  for (const [code, info] of catalogue) {
    if (!docs.has(code)) problems.push(`${code}: no "## ${code}" entry in docs/errors.md`);
    else if (docs.get(code) !== info.retryable) problems.push(`${code}: docs/errors.md must say "Retryable: ${info.retryable ? 'yes' : 'no'}"`);
  }
  for (const code of docs.keys()) if (!catalogue.has(code)) problems.push(`${code}: documented but not in the catalogue`);
  return problems;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every string or template-literal part in `text` (comments are not strings) that mentions `SWB_E_`. */
function swbLiterals(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const hits: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) && node.text.includes('SWB_E_')) {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      hits.push(`${line + 1}: ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return hits;
}

describe('the error catalogue', () => {
  it('has an entry on docs/errors.md for every code, with the same retryable answer, and none more', () => {
    const page = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    expect(SWB_ERRORS.size).toBeGreaterThan(30);
    expect(pageProblems(page, SWB_ERRORS)).toEqual([]);
  });

  it('the page check fails when a code is added without an entry, or the page disagrees', () => {
    const page = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    const added = new Map<string, { retryable: boolean }>([...SWB_ERRORS, ['SWB_E_SOMETHING_NEW', { retryable: false }]]);
    expect(pageProblems(page, added)).toEqual(['SWB_E_SOMETHING_NEW: no "## SWB_E_SOMETHING_NEW" entry in docs/errors.md']);
    const flipped = page.replace(/(## SWB_E_SHUTTING_DOWN\n\n)Retryable: yes/, '$1Retryable: no');
    expect(pageProblems(flipped, SWB_ERRORS)).toEqual(['SWB_E_SHUTTING_DOWN: docs/errors.md must say "Retryable: yes"']);
    const stale = `${page}\n## SWB_E_GONE\n\nRetryable: no\n`;
    expect(pageProblems(stale, SWB_ERRORS)).toEqual(['SWB_E_GONE: documented but not in the catalogue']);
  });

  it('no source file outside the catalogue spells out an SWB_E_ code', () => {
    const dirs = ['packages', 'apps'].flatMap((top) =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(root, top, d.name, 'src')),
    );
    const offenders: string[] = [];
    let scanned = 0;
    for (const dir of dirs) {
      let files: string[];
      try {
        files = sourceFiles(dir);
      } catch {
        continue; // a package without src
      }
      for (const f of files) {
        const rel = relative(root, f).split('\\').join('/');
        if (rel === CATALOGUE_FILE) continue;
        scanned++;
        for (const hit of swbLiterals(f, readFileSync(f, 'utf8'))) offenders.push(`${rel}:${hit}`);
      }
    }
    expect(scanned).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
    // The scanner itself finds what it must (strings and template parts) and ignores comments.
    expect(swbLiterals('x.ts', "// SWB_E_IN_A_COMMENT\nconst a = 'SWB_E_A'; const b = `SWB_E_B_${a}`;")).toEqual(['2: SWB_E_A', '2: SWB_E_B_']);
    const inCatalogue = swbLiterals(CATALOGUE_FILE, readFileSync(join(root, CATALOGUE_FILE), 'utf8')).filter((h) => /: SWB_E_[A-Z_]+$/.test(h));
    expect(inCatalogue).toHaveLength(SWB_ERRORS.size);
  });

  it('names every code once: SwbErrorCode values are the catalogue keys, and core re-exports the same catalogue', () => {
    const values = Object.values(SwbErrorCode);
    expect(new Set(values).size).toBe(values.length);
    expect(new Set(values)).toEqual(new Set(SWB_ERRORS.keys()));
    for (const [code, info] of SWB_ERRORS) {
      expect(info.code).toBe(code);
      expect(info.message.length).toBeGreaterThan(0);
      expect(Object.isFrozen(info)).toBe(true);
    }
    expect(core.SwbErrorCode).toBe(SwbErrorCode);
    expect(core.isSwbError).toBe(isSwbError);
    expect(core.SwbError).toBe(SwbError);
    expect(core.PermissionErrorCode).toEqual({ RuleSyntax: 'SWB_E_RULE_SYNTAX', HookConfig: 'SWB_E_HOOK_CONFIG' });
  });

  it('keeps the model codes and which of them are retried', () => {
    const kinds = Object.keys(MODEL_ERROR_CODES) as ModelErrorKind[];
    expect(kinds).toHaveLength(12);
    const retried = new Set(['rate_limit', 'overloaded', 'server', 'connection', 'stalled', 'truncated']);
    for (const kind of kinds) {
      const e = new ModelError(kind, 'm');
      expect(e.code).toBe(`SWB_E_MODEL_${kind.toUpperCase()}`);
      expect(e.retryable).toBe(retried.has(kind));
      expect(isSwbError(e, e.code)).toBe(true);
    }
  });
});

describe('SwbError and isSwbError', () => {
  it('defaults the message to the catalogue entry and answers retryable from it', () => {
    const e = new SwbError(SwbErrorCode.ShuttingDown);
    expect(e.message).toBe(SWB_ERRORS.get('SWB_E_SHUTTING_DOWN')!.message);
    expect(e.retryable).toBe(true);
    expect(new SwbError(SwbErrorCode.Config, 'bad key').message).toBe('bad key');
    expect(new SwbError(SwbErrorCode.Config, '').message).toBe('');
    expect(new SwbError(SwbErrorCode.Config).retryable).toBe(false);
  });

  it('matches by code, and is false for anything else, whatever is thrown', () => {
    const e = new SwbError(SwbErrorCode.NotReady, 'x');
    expect(isSwbError(e)).toBe(true);
    expect(isSwbError(e, SwbErrorCode.NotReady)).toBe(true);
    expect(isSwbError(e, SwbErrorCode.ShuttingDown)).toBe(false);
    // An error of another copy of the module (or one decorated with a catalogue code) is recognised.
    expect(isSwbError(Object.assign(new Error('x'), { code: 'SWB_E_SHUTTING_DOWN' }), SwbErrorCode.ShuttingDown)).toBe(true);
    // Not an error, or not a catalogue code: false.
    expect(isSwbError({ code: 'SWB_E_SHUTTING_DOWN' })).toBe(false);
    expect(isSwbError(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false);
    expect(isSwbError(Object.assign(new Error('x'), { code: 'SWB_E_NOT_IN_THE_CATALOGUE' }))).toBe(false);
    for (const v of [undefined, null, 0, '', 'SWB_E_SHUTTING_DOWN', Symbol('s'), () => 1]) expect(isSwbError(v)).toBe(false);
    const hostile = Object.defineProperty(new Error('x'), 'code', {
      get() {
        throw new Error('boom');
      },
    });
    expect(isSwbError(hostile)).toBe(false);
    const { proxy, revoke } = Proxy.revocable(new Error('x'), {});
    revoke();
    expect(isSwbError(proxy)).toBe(false);
  });

  it('every error class extends SwbError and carries a catalogue code', () => {
    const errors: Array<[SwbError, string]> = [
      [new ConfigError('c'), 'SWB_E_CONFIG'],
      [new WebhookConfigError('w'), 'SWB_E_CONFIG'],
      [new StartupError('s', 'gateway.port'), 'SWB_E_STARTUP'],
      [new InstanceLockedError('/data', undefined), 'SWB_E_INSTANCE_LOCKED'],
      [new core.RuleSyntaxError('Bash(', 'unclosed'), 'SWB_E_RULE_SYNTAX'],
      [new core.HookRunError('timeout', 'timed out'), 'SWB_E_HOOK_RUN'],
      [new core.RealPathError('a/b', 'ELOOP'), 'SWB_E_REAL_PATH'],
      [new SafeRegexError('too long', 'too-long'), 'SWB_E_REGEX'],
      [new RegexWorkerStopped('deadline', 'ran too long'), 'SWB_E_REGEX_STOPPED'],
      [new PathEscapeError('../x'), 'SWB_E_PATH_ESCAPE'],
      [new FileToolError(SwbErrorCode.FileKind, 'k'), 'SWB_E_FILE_KIND'],
      [new McpToolError(SwbErrorCode.McpTimeout, 't'), 'SWB_E_MCP_TIMEOUT'],
      [new ModelError('auth', 'a'), 'SWB_E_MODEL_AUTH'],
    ];
    for (const [e, code] of errors) {
      expect(e).toBeInstanceOf(SwbError);
      expect(e.code).toBe(code);
      expect(isSwbError(e, e.code)).toBe(true);
      expect(e.name).not.toBe('SwbError');
    }
    expect(new StartupError('s', 'k').exitCode).toBe(78);
  });
});
