import { mkdirSync, readFileSync, symlinkSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chat, useGateway, personWorkspace } from './helpers.js';

// File edits run without asking here; the permission pipeline has its own tests.
const env = useGateway({ config: { agents: { default: { mode: 'acceptEdits' } } }, client: true });
let workspace: string;

type Block = { type: string; tool_use_id?: string; content?: string; is_error?: boolean; id?: string };
const lastUserBlocks = (i: number) => {
  const body = env.fake.requests[i]!.body as { messages: Array<{ role: string; content: Block[] }> };
  const last = body.messages.at(-1)!;
  expect(last.role).toBe('user');
  return last.content;
};

beforeAll(() => {
  workspace = personWorkspace(env.gw);
  writeFileSync(join(workspace, 'notes.txt'), 'remember the milk\n');
});

describe('tools end to end', () => {
  it('runs list_files and read_file, then write_file, and returns results to the model in order', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue(
      {
        toolUses: [
          { name: 'list_files', input: {}, id: 'toolu_list' },
          { name: 'read_file', input: { path: 'notes.txt' }, id: 'toolu_read' },
        ],
      },
      { toolUses: [{ name: 'write_file', input: { path: 'out/result.txt', content: 'milk bought' }, id: 'toolu_write' }] },
      { text: 'All done.' },
    );
    const turn = await chat(ws, 't1', 'check my notes and record the result');
    expect(turn.end).toMatchObject({ type: 'final', text: 'All done.' });
    const first = lastUserBlocks(start + 1);
    expect(first.map((b) => b.tool_use_id)).toEqual(['toolu_list', 'toolu_read']);
    expect(first[0]!.content).toContain('notes.txt');
    expect(first[1]!.content).toContain('remember the milk');
    expect(first.some((b) => b.is_error)).toBe(false);
    const second = lastUserBlocks(start + 2);
    expect(second.map((b) => b.tool_use_id)).toEqual(['toolu_write']);
    expect(second[0]!.is_error).toBeFalsy();
    expect(readFileSync(join(workspace, 'out/result.txt'), 'utf8')).toBe('milk bought');
    const tools = turn.frames.filter((f) => f.type === 'tool').map((f) => `${f.phase}:${f.name}`);
    expect(tools).toEqual(['start:list_files', 'start:read_file', 'end:list_files', 'end:read_file', 'start:write_file', 'end:write_file']);
  });

  it('refuses path escapes and tells the model with is_error results', async () => {
    const { fake, ws } = env;
    const outside = mkdtempSync(join(tmpdir(), 'swb-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    mkdirSync(join(workspace, 'links'), { recursive: true });
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'links', 'escape.txt'));
    symlinkSync(outside, join(workspace, 'links', 'outdir'));
    const start = fake.requests.length;
    fake.enqueue(
      {
        toolUses: [
          { name: 'read_file', input: { path: '../../credentials' }, id: 'toolu_dotdot' },
          { name: 'read_file', input: { path: '/etc/passwd' }, id: 'toolu_abs' },
          { name: 'read_file', input: { path: 'links/escape.txt' }, id: 'toolu_link' },
        ],
      },
      { toolUses: [{ name: 'write_file', input: { path: 'links/outdir/planted.txt', content: 'x' }, id: 'toolu_write_out' }] },
      { text: 'I could not do that.' },
    );
    const turn = await chat(ws, 't2', 'read some files');
    expect(turn.end).toMatchObject({ type: 'final', text: 'I could not do that.' });
    const reads = lastUserBlocks(start + 1);
    expect(reads.map((b) => [b.tool_use_id, b.is_error])).toEqual([
      ['toolu_dotdot', true],
      ['toolu_abs', true],
      ['toolu_link', true],
    ]);
    for (const b of reads) {
      expect(b.content).toContain('inside the workspace');
      expect(b.content).not.toContain('outside secret');
      expect(b.content).not.toContain('root:');
    }
    const write = lastUserBlocks(start + 2);
    expect(write[0]).toMatchObject({ tool_use_id: 'toolu_write_out', is_error: true });
    expect(() => readFileSync(join(outside, 'planted.txt'))).toThrow();
  });
});
