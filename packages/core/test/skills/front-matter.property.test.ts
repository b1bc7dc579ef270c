import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ALLOWED_TOOLS_MAX, parseSkillFile, SKILL_DESCRIPTION_MAX, SKILL_NAME, SKILL_NAME_MAX } from '../../src/index.js';

// The SKILL.md parser reads operator files, but a file may be anything: it must never throw,
// never let a prototype key through, and accept only front matter whose fields hold.
const numRuns = Number(process.env.SWB_PROPERTY_RUNS ?? 200);

const skillFile = (frontMatter: string, body = 'BODY') => `---\n${frontMatter}\n---\n${body}\n`;

/** Front-matter values of every wrong shape: wrong types, huge strings, nesting, hostile keys. */
const hostileValue = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.string({ maxLength: 2000 }),
  fc.constantFrom('', ' ', '\n', 'a'.repeat(SKILL_NAME_MAX + 1), 'x'.repeat(SKILL_DESCRIPTION_MAX + 1), 'Has Caps', 'a--b', '-a', '__proto__'),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 200 }), { maxLength: ALLOWED_TOOLS_MAX + 5 }),
);
const hostileKey = fc.oneof(
  fc.constantFrom('name', 'description', 'allowed-tools', '__proto__', 'constructor', 'prototype', 'toString'),
  fc.string({ maxLength: 20 }),
);

/** Every accepted result obeys the documented bounds. */
function expectValid(result: ReturnType<typeof parseSkillFile>): void {
  if (!result.ok) {
    expect(typeof result.reason).toBe('string');
    expect(result.reason.length).toBeGreaterThan(0);
    return;
  }
  const { meta } = result.skill;
  expect(meta.name).toMatch(SKILL_NAME);
  expect(meta.name.length).toBeLessThanOrEqual(SKILL_NAME_MAX);
  expect(typeof meta.description).toBe('string');
  expect(meta.description.trim()).not.toBe('');
  expect(meta.description.length).toBeLessThanOrEqual(SKILL_DESCRIPTION_MAX);
  if (meta.allowedTools) {
    expect(meta.allowedTools.length).toBeLessThanOrEqual(ALLOWED_TOOLS_MAX);
    for (const t of meta.allowedTools) expect(t).toMatch(/^(?:group:[a-z]+|[A-Za-z0-9_*-]{1,128})$/u);
  }
  expect(Object.keys(meta).sort()).toEqual(['description', 'name', ...(meta.allowedTools ? ['allowedTools'] : [])].sort());
  expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
}

describe('parseSkillFile with hostile shapes', () => {
  it('never throws on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), (text) => expectValid(parseSkillFile(text))),
      { numRuns },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 1000 }), (fm) => expectValid(parseSkillFile(skillFile(fm)))),
      { numRuns },
    );
  });

  it('front matter of hostile keys and values: a result within the bounds, never a prototype change', () => {
    fc.assert(
      fc.property(fc.dictionary(hostileKey, hostileValue, { maxKeys: 6 }), (record) => {
        let yaml: string;
        try {
          yaml = stringify(record);
        } catch {
          return;
        }
        const result = parseSkillFile(skillFile(yaml));
        expectValid(result);
        if (Object.hasOwn(record, '__proto__') || Object.hasOwn(record, 'constructor') || Object.hasOwn(record, 'prototype')) expect(result.ok).toBe(false);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns },
    );
  });

  it('valid front matter round-trips: name, description and allowed-tools as written, the body after it', () => {
    const name = fc.stringMatching(/^[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}$/u);
    const description = fc.string({ minLength: 1, maxLength: 300 }).filter((s) => s.trim() !== '');
    const tools = fc.uniqueArray(fc.stringMatching(/^[a-z_]{1,20}$/u), { maxLength: 10 });
    fc.assert(
      fc.property(name, description, fc.option(tools, { nil: undefined }), (n, d, t) => {
        const result = parseSkillFile(skillFile(stringify({ name: n, description: d, ...(t ? { 'allowed-tools': t } : {}) }), 'Do the thing.'));
        expect(result).toEqual({ ok: true, skill: { meta: { name: n, description: d, ...(t ? { allowedTools: t } : {}) }, body: 'Do the thing.\n' } });
      }),
      { numRuns },
    );
  });

  it('refuses the classic YAML attacks and malformed files with a reason naming the problem', () => {
    const cases: Array<[string, RegExp]> = [
      ['no front matter', /must start with a "---" line/u],
      ['---\nname: a\n', /not closed/u],
      [skillFile('name: a\nname: b\ndescription: d'), /not valid YAML/u],
      [skillFile('a: &x [1, 2]\nb: *x\nname: a\ndescription: d'), /could not be parsed|not valid YAML/u],
      [skillFile('<<: {name: a}\ndescription: d'), /field name/u],
      [skillFile('__proto__: {polluted: 1}\nname: a\ndescription: d'), /field __proto__/u],
      [skillFile('name: A\ndescription: d'), /field name/u],
      [skillFile('name: a\ndescription: 42'), /field description/u],
      [skillFile('name: a\ndescription: "  "'), /field description/u],
      [skillFile(`name: a\ndescription: ${'x'.repeat(SKILL_DESCRIPTION_MAX + 1)}`), /field description/u],
      [skillFile('name: a\ndescription: d\nallowed-tools: {x: 1}'), /field allowed-tools/u],
      [skillFile('name: a\ndescription: d\nallowed-tools: ["rm -rf /"]'), /field allowed-tools/u],
      [skillFile('- a\n- b'), /mapping/u],
      [skillFile('name: !!binary aGk=\ndescription: d'), /field name|not valid YAML/u],
    ];
    for (const [text, reason] of cases) {
      const result = parseSkillFile(text);
      expect(result.ok, text).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(reason);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts a comma-separated allowed-tools string, a BOM, CRLF line ends and unknown keys', () => {
    const result = parseSkillFile(
      '\uFEFF---\r\nname: deploy\r\ndescription: Ship it\r\nallowed-tools: read_file, group:fs mcp__gh__*\r\nlicense: MIT\r\n---\r\n\r\nSteps\r\n',
    );
    expect(result).toEqual({
      ok: true,
      skill: { meta: { name: 'deploy', description: 'Ship it', allowedTools: ['read_file', 'group:fs', 'mcp__gh__*'] }, body: 'Steps\n' },
    });
  });
});
