import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExecChecks, loadExecChecks } from '../../src/exec/index.js';

// Hostile strings are only analysed, never executed.
let root: string;
let ws: string;
let checks: ExecChecks;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'exec-props-'));
  ws = path.join(root, 'ws');
  mkdirSync(ws);
  checks = await loadExecChecks();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const SHELLISH = [...';&|<>()$`\'"\\{}[]*?~!#=\n\t -', 'rm', 'sh', 'eval', 'cd', '..', '/', 'ls', 'cat', 'EOF', '<<', '$(', '${', '<(', "$'", '\\x72'];
const hostile = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.array(fc.constantFrom(...SHELLISH), { maxLength: 30 }).map((parts) => parts.join('')),
  fc.array(fc.constantFrom(...SHELLISH), { maxLength: 30 }).map((parts) => parts.join(' ')),
);

describe('exec checks: hostile input', () => {
  it('never throws, always answers one of the three outcomes, and only allows without a safety source', () => {
    fc.assert(
      fc.property(hostile, (command) => {
        const result = checks.analyze(command, { workspace: ws });
        expect(['allow', 'ask', 'deny']).toContain(result.outcome);
        expect(result.parts.length).toBeGreaterThan(0);
        if (result.outcome === 'allow') expect(result.source).toBeUndefined();
        else expect(result.source).toBe('safety');
        if (result.readOnly) expect(result.outcome).toBe('allow');
        for (const part of result.parts) expect(['allow', 'ask', 'deny']).toContain(part.outcome);
        expect(checks.ruleContents({ command }).every((content) => typeof content === 'string')).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('the outcome is the strictest of the parts', () => {
    const rank = { allow: 0, ask: 1, deny: 2 } as const;
    fc.assert(
      fc.property(hostile, (command) => {
        const result = checks.analyze(command, { workspace: ws });
        const worst = Math.max(...result.parts.map((part) => rank[part.outcome]));
        expect(rank[result.outcome]).toBe(worst);
      }),
      { numRuns: 300 },
    );
  });

  it('an unterminated quote or substitution anywhere is an ask with source safety', () => {
    const opener = fc.constantFrom('"', "'", '$(', '`', '${', '<(', "$'");
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z ]{0,20}$/u), opener, fc.stringMatching(/^[a-z ]{0,20}$/u), (before, open, after) => {
        const result = checks.analyze(`${before}${open}${after}`, { workspace: ws });
        expect(result).toMatchObject({ outcome: 'ask', source: 'safety', readOnly: false });
      }),
      { numRuns: 200 },
    );
  });

  it('appending a dangerous part to any allowed command never leaves it allowed', () => {
    const safe = fc.constantFrom('ls', 'cat a.txt', 'git status', 'echo hi', 'npm test', 'touch a');
    const glue = fc.constantFrom('; ', ' && ', ' || ', ' | ', '\n', ' & ');
    const bad = fc.constantFrom('rm -rf /', 'rm -rf ~', 'sh -c x', 'eval x', 'cat /etc/shadow', 'cd ..', 'touch /tmp/x', 'rm -rf .');
    fc.assert(
      fc.property(safe, glue, bad, (first, sep, last) => {
        const result = checks.analyze(`${first}${sep}${last}`, { workspace: ws });
        expect(result.outcome).not.toBe('allow');
        expect(result.source).toBe('safety');
      }),
      { numRuns: 200 },
    );
  });
});
