import { describe, expect, it } from 'vitest';
import { McpServerConfigSchema, mcpResultToToolResult, mcpToolName } from '../../src/index.js';

describe('mcpToolName', () => {
  it('prefixes and sanitizes', () => {
    expect(mcpToolName('files', 'read')).toBe('mcp__files__read');
    expect(mcpToolName('my.server', 'do it/now!')).toBe('mcp__my_server__do_it_now_');
  });

  it('cuts long names to 64 chars with a distinguishing hash', () => {
    const a = mcpToolName('s', `${'x'.repeat(100)}a`);
    const b = mcpToolName('s', `${'x'.repeat(100)}b`);
    expect(a).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
  });

  it('suffixes names already taken', () => {
    expect(mcpToolName('a.b', 't', new Set(['mcp__a_b__t']))).toBe('mcp__a_b__t_2');
    expect(mcpToolName('a.b', 't', new Set(['mcp__a_b__t', 'mcp__a_b__t_2']))).toBe('mcp__a_b__t_3');
  });
});

describe('mcpResultToToolResult', () => {
  it('joins text and summarizes other blocks', () => {
    expect(
      mcpResultToToolResult({
        content: [
          { type: 'text', text: 'a' },
          { type: 'audio', data: '', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'x://blob', blob: 'AA==' } },
        ],
      }),
    ).toEqual({ content: 'a\n[audio: audio/wav]\n[resource: x://blob]' });
  });

  it('keeps isError and falls back to structured content', () => {
    expect(mcpResultToToolResult({ content: [], structuredContent: { n: 1 }, isError: true })).toEqual({
      content: '{"n":1}',
      isError: true,
    });
    expect(mcpResultToToolResult({ content: [] })).toEqual({ content: '' });
  });
});

describe('McpServerConfigSchema', () => {
  it('accepts stdio and http servers and rejects unknown keys', () => {
    expect(McpServerConfigSchema.safeParse({ command: 'npx', args: ['-y', 'srv'], env: { K: 'v' }, readOnlyTools: ['r'] }).success).toBe(true);
    expect(McpServerConfigSchema.safeParse({ url: 'https://mcp.example/mcp', headers: { a: 'b' }, timeoutMs: 1000 }).success).toBe(true);
    expect(McpServerConfigSchema.safeParse({ command: 'x', bogus: 1 }).success).toBe(false);
    expect(McpServerConfigSchema.safeParse({}).success).toBe(false);
  });
});
