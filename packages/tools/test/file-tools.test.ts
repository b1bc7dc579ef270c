import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileTools, DEFAULT_MAX_RESULT_CHARS } from '../src/index.js';

describe('createFileTools', () => {
  const tools = createFileTools();
  const byName = new Map(tools.map((t) => [t.name, t]));

  it('returns the five file tools with the right flags', () => {
    expect(tools.map((t) => [t.name, t.readOnly, t.concurrencySafe])).toEqual([
      ['read_file', true, true],
      ['list_files', true, true],
      ['search_files', true, true],
      ['write_file', false, false],
      ['edit_file', false, false],
    ]);
    for (const t of tools) expect(t.maxResultChars).toBe(DEFAULT_MAX_RESULT_CHARS);
    expect(DEFAULT_MAX_RESULT_CHARS).toBe(50_000);
    expect(createFileTools({ maxResultChars: 123 }).every((t) => t.maxResultChars === 123)).toBe(true);
  });

  it('describes every input field for the model and rejects unknown fields', () => {
    for (const t of tools) {
      expect(t.description.length).toBeGreaterThan(20);
      const schema = z.toJSONSchema(t.input, { io: 'input' }) as { properties: Record<string, { description?: string }> };
      for (const [field, prop] of Object.entries(schema.properties)) {
        expect(prop.description, `${t.name}.${field}`).toBeTruthy();
      }
    }
    expect(byName.get('write_file')!.input.safeParse({ path: 'a', content: 'b', mode: 'x' }).success).toBe(false);
  });

  it('exposes the normalised relative path as the permission rule content', () => {
    const rule = (name: string, raw: unknown) => byName.get(name)!.ruleContent!(byName.get(name)!.input.parse(raw));
    expect(rule('write_file', { path: './notes/a.md', content: '' })).toBe('notes/a.md');
    expect(rule('edit_file', { path: 'notes/../secrets/k', old_string: 'a', new_string: 'b' })).toBe('secrets/k');
    expect(rule('read_file', { path: 'notes/todo.md' })).toBe('notes/todo.md');
    expect(rule('list_files', {})).toBe('.');
    expect(rule('search_files', { pattern: 'x', path: 'src/' })).toBe('src');
  });
});
