import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chat, useGateway, personWorkspace } from './helpers.js';

// File edits run without asking here; the permission pipeline has its own tests.
const env = useGateway({ config: { agents: { default: { mode: 'acceptEdits' } } }, client: true });
let workspace: string;

beforeAll(() => {
  workspace = personWorkspace(env.gw);
  writeFileSync(join(workspace, 'todo.md'), '- buy milk\n- buy bread\n- call mum\n');
});

type Block = { tool_use_id: string; content: string; is_error?: boolean };
const results = (i: number) => (env.fake.requests[i]!.body as { messages: Array<{ content: Block[] }> }).messages.at(-1)!.content;

describe('search_files and edit_file end to end', () => {
  it('searches, refuses ambiguous and missing edits, refuses escapes, and applies a unique edit', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue(
      {
        toolUses: [
          { name: 'search_files', input: { pattern: 'buy \\w+' }, id: 'toolu_search' },
          { name: 'search_files', input: { pattern: '(unclosed' }, id: 'toolu_badre' },
        ],
      },
      {
        toolUses: [
          { name: 'edit_file', input: { path: 'todo.md', old_string: 'buy', new_string: 'get' }, id: 'toolu_ambiguous' },
          { name: 'edit_file', input: { path: 'todo.md', old_string: 'walk the dog', new_string: 'x' }, id: 'toolu_missing' },
          { name: 'edit_file', input: { path: '../../credentials', old_string: 'a', new_string: 'b' }, id: 'toolu_escape' },
          { name: 'edit_file', input: { path: 'todo.md', old_string: 'call mum', new_string: 'call mum and dad' }, id: 'toolu_ok' },
        ],
      },
      { toolUses: [{ name: 'edit_file', input: { path: 'todo.md', old_string: 'buy', new_string: 'get', replaceAll: true }, id: 'toolu_all' }] },
      { text: 'Your list is updated.' },
    );
    const t = await chat(ws, 'es1', 'tidy my todo list');
    expect(t.end).toMatchObject({ type: 'final', text: 'Your list is updated.' });
    const [search, badRe] = results(start + 1);
    expect(search!.is_error).toBeFalsy();
    expect(search!.content).toContain('todo.md:1: - buy milk');
    expect(search!.content).toContain('todo.md:2: - buy bread');
    expect(badRe!.is_error).toBe(true);
    const [ambiguous, missing, escaped, ok] = results(start + 2);
    expect(ambiguous).toMatchObject({ is_error: true });
    expect(ambiguous!.content).toMatch(/occurs 2 times/);
    expect(missing).toMatchObject({ is_error: true });
    expect(missing!.content).toMatch(/not found/);
    expect(escaped).toMatchObject({ is_error: true });
    expect(escaped!.content).toContain('inside the workspace');
    expect(ok!.is_error).toBeFalsy();
    expect(results(start + 3)[0]!.is_error).toBeFalsy();
    expect(readFileSync(join(workspace, 'todo.md'), 'utf8')).toBe('- get milk\n- get bread\n- call mum and dad\n');
  });
});
