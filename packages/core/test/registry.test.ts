import { describe, expect, it } from 'vitest';
import { CapabilityRegistry, checkRuleText, type Channel } from '../src/index.js';
import { editFile, fileTool, readFile, sendMail, writeFile } from './permissions/fixtures.js';

const mcpRead = { ...sendMail, name: 'mcp__mail__list', readOnly: true, concurrencySafe: true };
const tools = [readFile, fileTool('list_files', true), fileTool('search_files', true), writeFile, editFile, sendMail, mcpRead];
const channel = { id: 'telegram:main', type: 'telegram', account: 'main', required: false, health: () => ({ state: 'connected' }) } as unknown as Channel;

const registry = new CapabilityRegistry({
  tools,
  mcpServers: ['mail'],
  channels: [channel],
  model: { name: 'claude', baseUrl: '', apiKey: 'sk-secret' },
  hooks: {
    PreToolUse: [{ type: 'http', url: 'https://hooks.example.com/x?token=secret', headers: { authorization: 'Bearer secret' }, matcher: 'write_file' }],
  },
});
const names = (list: { name: string }[]) => list.map((t) => t.name);

describe('CapabilityRegistry: profiles and groups', () => {
  it.each([
    ['none', []],
    ['minimal', ['read_file', 'list_files', 'search_files']],
    ['readonly', ['read_file', 'list_files', 'search_files', 'mcp__mail__list']],
    ['messaging', []],
    ['coding', ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file']],
    ['full', names(tools)],
  ] as const)('profile %s offers %j', (profile, expected) => {
    expect(names(registry.toolsFor(profile))).toEqual(expected);
  });

  it('a list of profiles and groups combines them, in registry order', () => {
    expect(names(registry.toolsFor(['group:mcp', 'minimal']))).toEqual(['read_file', 'list_files', 'search_files', 'mcp__mail__send', 'mcp__mail__list']);
  });

  it('expands a group rule into one rule per member (content kept); an empty group into none; other rules pass', () => {
    expect(registry.expandRule('group:fs(notes/**)')).toEqual(
      ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file'].map((n) => `${n}(notes/**)`),
    );
    expect(registry.expandRule('group:mcp')).toEqual(['mcp__mail__send', 'mcp__mail__list']);
    expect(registry.expandRule('group:web')).toEqual([]);
    expect(registry.expandRule('write_file(a.txt)')).toEqual(['write_file(a.txt)']);
    expect(registry.groupTable()['group:runtime']).toEqual([]);
  });

  it('checkRuleText refuses unknown groups and malformed rules', () => {
    expect(checkRuleText('group:fs(notes/**)')).toEqual({ ok: true });
    expect(checkRuleText('group:nope')).toMatchObject({ ok: false, message: expect.stringContaining('unknown tool group') });
    expect(checkRuleText('write_file(')).toMatchObject({ ok: false });
  });
});

describe('CapabilityRegistry: risk facts and listing', () => {
  it('MCP tools are open-world and, unless read-only, destructive; built-in writes are destructive', () => {
    expect(registry.riskOf(sendMail)).toEqual({ readOnly: false, destructive: true, concurrencySafe: false, openWorld: true });
    expect(registry.riskOf(mcpRead)).toMatchObject({ destructive: false, openWorld: true });
    expect(registry.riskOf(writeFile)).toMatchObject({ destructive: true, openWorld: false });
    expect(registry.riskOf(readFile)).toMatchObject({ destructive: false, openWorld: false });
  });

  it('lists tools, channels, the model and hooks with no secret in them', () => {
    const list = registry.list();
    expect(list.map((c) => c.id)).toEqual([...names(tools), 'telegram:main', 'model:anthropic', 'hook:PreToolUse:0']);
    expect(registry.get('mcp__mail__send')).toMatchObject({ kind: 'tool', source: 'mcp:mail', groups: ['group:mcp'] });
    expect(registry.get('read_file')).toMatchObject({ source: 'builtin', groups: ['group:fs'] });
    expect(registry.get('model:anthropic')?.detail).toEqual({ model: 'claude', fallback: null, configured: true, customBaseUrl: false });
    expect(registry.get('hook:PreToolUse:0')?.detail).toEqual({ event: 'PreToolUse', type: 'http', matcher: 'write_file' });
    expect(JSON.stringify(list)).not.toContain('secret');
  });
});
