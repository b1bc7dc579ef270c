import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../src/channel.js';
import { MAX_TOOL_STATUS_LINES, MAX_TOOL_SUMMARY_CHARS, summarizeProgress, summarizeToolInput, ToolStatusBoard, toolStatusLine } from '../src/tool-status.js';

const start = (id: string, name: string, input: unknown): TurnEvent => ({ type: 'tool_start', toolUseId: id, name, input, readOnly: false });
const progress = (id: string, message: string): TurnEvent => ({ type: 'tool_progress', toolUseId: id, name: 'exec', message });
const end = (id: string, name: string, isError = false): TurnEvent => ({
  type: 'tool_end',
  toolUseId: id,
  name,
  result: { type: 'tool_result', tool_use_id: id, content: 'x', ...(isError ? { is_error: true } : {}) },
});

describe('summarizeToolInput', () => {
  it('shows only the host for web_fetch: no path, query, port or credentials', () => {
    expect(summarizeToolInput('web_fetch', { url: 'https://user:pw@example.com:8443/a/b?token=abc#x' })).toBe('example.com');
    expect(summarizeToolInput('WebFetch', { url: 'https://docs.example.org/page' })).toBe('docs.example.org');
    expect(summarizeToolInput('web_fetch', { url: 'not a url' })).toBe('');
  });

  it('shows the first words of an exec command: leading assignments dropped, cut at a shell operator, key-like words masked', () => {
    expect(summarizeToolInput('exec', { command: 'npm test -- --run unit-tests' })).toBe('npm test --');
    expect(summarizeToolInput('exec', { command: 'API_KEY=sk-abc123 TOKEN=x curl https://a.example' })).toBe('curl https://a.example');
    expect(summarizeToolInput('exec', { command: 'echo one; cat /etc/shadow' })).toBe('echo one');
    expect(summarizeToolInput('exec', { command: 'ls | grep secret' })).toBe('ls');
    expect(summarizeToolInput('exec', { command: 'mysql --password=hunter2 db' })).toBe('mysql --password=… db');
    expect(summarizeToolInput('exec', { command: 'curl ghp_0123456789abcdefABCDEF0123' })).toBe('curl …');
    expect(summarizeToolInput('exec', { command: 'git clone https://me:tok@git.example/r' })).toBe('git clone https://git.example/r');
    expect(summarizeToolInput('bash', { command: 'make\nrm -rf /' })).toBe('make');
  });

  it('shows the path for file tools, and nothing of any other tool', () => {
    expect(summarizeToolInput('read_file', { path: 'notes/todo.md' })).toBe('notes/todo.md');
    expect(summarizeToolInput('write_file', { path: 'a.txt', content: 'the secret content' })).toBe('a.txt');
    expect(summarizeToolInput('mcp__github__create_issue', { title: 'private text', body: 'more' })).toBe('');
    expect(summarizeToolInput('memory_save', { fact: 'my PIN is 1234' })).toBe('');
    // ordinary paths with digits are shown; a key-like run inside one is not
    expect(summarizeToolInput('edit_file', { path: 'src/components/button2.tsx' })).toBe('src/components/button2.tsx');
    expect(summarizeToolInput('read_file', { path: 'reports/2026-12-02-q4.md' })).toBe('reports/2026-12-02-q4.md');
    expect(summarizeToolInput('read_file', { path: 'keys/AKIA1234567890ABCDEF.txt' })).toBe('…');
  });

  it('is total: missing fields, wrong types, non-objects, throwing scrubbers', () => {
    for (const input of [undefined, null, 42, 'str', [], { path: 7 }, { command: '' }, { url: {} }, Object.create(null)]) {
      for (const name of ['exec', 'read_file', 'web_fetch', 'other']) expect(summarizeToolInput(name, input)).toBe('');
    }
    const inherited = Object.create({ path: 'inherited.txt' });
    expect(summarizeToolInput('read_file', inherited)).toBe('');
    expect(
      summarizeToolInput('read_file', { path: 'a.txt' }, () => {
        throw new Error('boom');
      }),
    ).toBe('');
  });

  it('applies the gateway scrubber, strips control characters and caps the length', () => {
    const scrub = (t: string) => t.split('s3cr3t-value').join('[redacted]');
    expect(summarizeToolInput('read_file', { path: 'dir/s3cr3t-value.txt' }, scrub)).toBe('dir/[redacted].txt');
    expect(summarizeToolInput('read_file', { path: 'a\u0000b\u202ec\nd' })).toBe('a b c d');
    const long = summarizeToolInput('read_file', { path: `${'d/'.repeat(100)}f.txt` });
    expect(long).toHaveLength(MAX_TOOL_SUMMARY_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('summarizeProgress', () => {
  it('masks and caps a progress note', () => {
    expect(summarizeProgress('12 lines so far, 5 s')).toBe('12 lines so far, 5 s');
    expect(summarizeProgress('got token=abc\u0007 ok')).toBe('got token=… ok');
    expect(summarizeProgress('x'.repeat(500)).length).toBeLessThanOrEqual(80);
  });
});

describe('ToolStatusBoard', () => {
  it('folds start, progress and end into lines and says when they changed', () => {
    const board = new ToolStatusBoard();
    expect(board.text()).toBe('');
    expect(board.apply({ type: 'text_delta', text: 'hi' })).toBe(false);
    expect(board.apply(start('t1', 'web_fetch', { url: 'https://example.com/x' }))).toBe(true);
    expect(board.text()).toBe('🔧 web_fetch example.com…');
    expect(board.apply(start('t1', 'web_fetch', { url: 'https://example.com/x' }))).toBe(false);
    expect(board.apply(start('t2', 'exec', { command: 'npm test' }))).toBe(true);
    expect(board.apply(progress('t2', '3 lines so far, 1 s'))).toBe(true);
    expect(board.apply(progress('t2', '3 lines so far, 1 s'))).toBe(false);
    expect(board.lines()).toEqual(['🔧 web_fetch example.com…', '🔧 exec npm test… · 3 lines so far, 1 s']);
    expect(board.apply(end('t1', 'web_fetch'))).toBe(true);
    expect(board.apply(end('t2', 'exec', true))).toBe(true);
    expect(board.apply(progress('t2', 'late'))).toBe(false);
    expect(board.lines()).toEqual(['✅ web_fetch example.com', '❌ exec npm test']);
  });

  it('shows a call that ended without a start (refused before it ran) as failed, by name only', () => {
    const board = new ToolStatusBoard();
    expect(board.apply(end('t9', 'write_file', true))).toBe(true);
    expect(board.text()).toBe('❌ write_file');
  });

  it('keys calls by id in a Map: ids like __proto__ are ordinary keys', () => {
    const board = new ToolStatusBoard();
    board.apply(start('__proto__', 'read_file', { path: 'a' }));
    board.apply(start('constructor', 'read_file', { path: 'b' }));
    expect(board.lines()).toEqual(['🔧 read_file a…', '🔧 read_file b…']);
  });

  it(`shows the newest ${MAX_TOOL_STATUS_LINES} calls and counts the older ones`, () => {
    const board = new ToolStatusBoard();
    for (let i = 0; i < MAX_TOOL_STATUS_LINES + 3; i++) {
      board.apply(start(`t${i}`, 'read_file', { path: `f${i}` }));
      board.apply(end(`t${i}`, 'read_file'));
    }
    const lines = board.lines();
    expect(lines[0]).toBe('(3 earlier tool calls)');
    expect(lines.slice(1)).toEqual(Array.from({ length: MAX_TOOL_STATUS_LINES }, (_, i) => `✅ read_file f${i + 3}`));
  });

  it('formats one line per state', () => {
    expect(toolStatusLine({ toolUseId: 'a', name: 'tool_search', summary: '', state: 'running' })).toBe('🔧 tool_search…');
    expect(toolStatusLine({ toolUseId: 'a', name: 'tool_search', summary: '', state: 'ok' })).toBe('✅ tool_search');
  });
});
