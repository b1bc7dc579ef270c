import { createFileTools } from '@switchboard/tools';
import { describe, expect, it } from 'vitest';
import { decidePermission, preFilter, scopesOf } from '../../src/index.js';
import { ctx, env, exec, rule, sendMail } from './fixtures.js';

const scopes = scopesOf({ agent: 'main', principal: 'p1', session: 's1' });
const tools = [...createFileTools(), exec, sendMail, { ...sendMail, name: 'mcp__mail__read' }];
const names = (ts: Array<{ name: string }>) => ts.map((t) => t.name);

describe('preFilter', () => {
  it('hides tools denied outright by a content-less deny rule at an applicable scope', () => {
    const ruleSet = [rule('deny', 'write_file'), rule('deny', 'Bash', { kind: 'principal', id: 'p1' }), rule('deny', 'mcp__mail')];
    expect(names(preFilter(tools, ruleSet, scopes))).toEqual(['read_file', 'list_files', 'search_files', 'edit_file']);
  });

  it('keeps tools whose deny has content, is for another scope, or is ask/allow', () => {
    const ruleSet = [
      rule('deny', 'write_file(secrets/**)'),
      rule('deny', 'edit_file', { kind: 'principal', id: 'p2' }),
      rule('ask', 'exec'),
      rule('allow', 'mcp__mail'),
      rule('deny', 'broken('),
    ];
    expect(names(preFilter(tools, ruleSet, scopes))).toEqual(names(tools));
  });

  it('honours wildcards', () => {
    expect(names(preFilter(tools, [rule('deny', 'mcp__mail__*')], scopes))).not.toContain('mcp__mail__read');
    expect(preFilter(tools, [rule('deny', '*')], scopes)).toEqual([]);
  });
});

describe('with the real workspace file tools', () => {
  const [read, , , write, edit] = createFileTools();

  it('uses their normalized rule content for rules, safety and acceptEdits', async () => {
    const c = ctx();
    const go = (tool: typeof read, input: unknown, extra: Parameters<typeof env>[0] = {}) => decidePermission({ tool: tool!, input, ctx: c }, env(extra));
    expect((await go(write, { path: './notes/../.git/config', content: 'x' }, { mode: 'bypassPermissions' })).source).toBe('safety');
    expect((await go(edit, { path: 'notes/a.md', old_string: 'a', new_string: 'b', replaceAll: false }, { mode: 'acceptEdits' })).behavior).toBe('allow');
    expect((await go(read, { path: 'cfg/./prod.env' }, { ruleSet: [rule('deny', 'Read(**/*.env)')] })).behavior).toBe('deny');
    expect((await go(write, { path: '/srv/ws/notes/x.md', content: '' }, { ruleSet: [rule('allow', 'write_file(notes/**)')] })).source).toBe('rule');
  });
});
