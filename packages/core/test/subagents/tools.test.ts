import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyTool, ToolContext } from '@switchboard/agent';
import { boundedReport, createTaskTool, subagentTools, summarizeToolInput, toolStatusLine } from '../../src/index.js';
import { editFile, readFile, sendMail, writeFile } from '../permissions/fixtures.js';

const task = createTaskTool([{ name: 'general', description: 'everything' }]);
const exitPlan = { ...readFile, name: 'exit_plan_mode' } as AnyTool;
const names = (tools: readonly { name: string }[]) => tools.map((t) => t.name);

describe('subagentTools: the type’s list intersected with the parent’s offered tools', () => {
  const parent = [readFile, writeFile, sendMail, task, exitPlan];

  it('general inherits the parent’s tools without task and exit_plan_mode', () => {
    expect(names(subagentTools(parent, { tools: 'inherit' }, true))).toEqual(['read_file', 'write_file', 'mcp__mail__send']);
  });

  it('a type never gets a tool the parent is not offered, whatever it lists', () => {
    // edit_file is in the type's list but not offered to this person (the pre-filter removed it).
    const type = { tools: new Set(['read_file', 'edit_file', 'mcp__mail__send', 'exit_plan_mode']) };
    expect(names(subagentTools(parent, type, true))).toEqual(['read_file', 'mcp__mail__send']);
    expect(names(subagentTools([readFile], type, true))).toEqual(['read_file']);
    expect(
      names(
        subagentTools(
          [editFile].filter(() => false),
          type,
          true,
        ),
      ),
    ).toEqual([]);
  });

  it('task only below the depth limit and only when the type names it', () => {
    const type = { tools: new Set(['read_file', 'task']) };
    expect(names(subagentTools(parent, type, true))).toEqual(['read_file', 'task']);
    expect(names(subagentTools(parent, type, false))).toEqual(['read_file']);
    expect(names(subagentTools([readFile], type, true))).toEqual(['read_file']);
  });

  it('property: the result is always a subset of the parent’s tools and of the type’s list', () => {
    const pool = [readFile, writeFile, editFile, sendMail, task, exitPlan];
    fc.assert(
      fc.property(
        fc.subarray(pool),
        fc.oneof(fc.constant('inherit' as const), fc.array(fc.oneof(fc.constantFrom(...pool.map((t) => t.name)), fc.string()), { maxLength: 8 })),
        fc.boolean(),
        (offered, list, deeper) => {
          const out = subagentTools(offered, { tools: list === 'inherit' ? 'inherit' : new Set(list) }, deeper);
          for (const tool of out) {
            expect(offered).toContain(tool);
            if (list !== 'inherit') expect(list).toContain(tool.name);
            expect(tool.name).not.toBe('exit_plan_mode');
            if (list === 'inherit' || !deeper) expect(tool.name).not.toBe('task');
          }
        },
      ),
    );
  });
});

describe('boundedReport', () => {
  it('keeps a short report and cuts a long one with a note', () => {
    expect(boundedReport('short', 10)).toBe('short');
    expect(boundedReport('0123456789ab', 10)).toBe("0123456789\n\n[The subagent's report was cut: 12 characters, the first 10 shown.]");
  });

  it('property: never splits a surrogate pair and never grows a report past budget + note', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (text, budget) => {
        const out = boundedReport(text, budget);
        if (text.length <= budget) {
          expect(out).toBe(text);
          return;
        }
        const body = out.slice(0, out.lastIndexOf("\n\n[The subagent's report was cut"));
        expect(body.length).toBeLessThanOrEqual(budget);
        expect(text.startsWith(body)).toBe(true);
        expect(/[\uD800-\uDBFF]$/.test(body)).toBe(false);
      }),
    );
  });
});

describe('the task tool', () => {
  const ctx = { signal: new AbortController().signal, toolUseId: 't', sessionId: 's', turnId: 'u', agentId: 'a', workspace: '/nowhere' } satisfies ToolContext;

  it('property: hostile inputs are refused by its schema, never thrown past it', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({ description: fc.anything(), prompt: fc.anything(), type: fc.anything() }, { requiredKeys: [] }),
          fc.constant(JSON.parse('{"__proto__":{"polluted":1},"description":"d","prompt":"p"}')),
          fc.constant({ description: 'd', prompt: 'p'.repeat(100_001) }),
        ),
        (input) => {
          const parsed = task.input.safeParse(input);
          if (parsed.success) {
            expect(typeof (parsed.data as { prompt: unknown }).prompt).toBe('string');
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          }
        },
      ),
    );
  });

  it('is concurrency-safe, not read-only, passes as a read for the mode, and refuses without a launcher', async () => {
    expect(task.concurrencySafe).toBe(true);
    expect(task.readOnly).toBe(false);
    expect(await task.checkPermissions!({ description: 'd', prompt: 'p' }, ctx)).toEqual({ behavior: 'passthrough', access: 'read' });
    expect(await task.call({ description: 'd', prompt: 'p' }, ctx)).toMatchObject({ isError: true });
  });

  it('shows as `🤖 <type>: <description>` on a status line', () => {
    const summary = summarizeToolInput('task', { description: 'count the files', prompt: 'secret prompt text' });
    expect(summary).toBe('general: count the files');
    expect(toolStatusLine({ toolUseId: 't', name: 'task', summary, state: 'running' })).toBe('🤖 general: count the files…');
    expect(toolStatusLine({ toolUseId: 't', name: 'task', summary: 'researcher: x', state: 'ok' })).toBe('✅ 🤖 researcher: x');
    expect(summarizeToolInput('task', null)).toBe('general: ');
  });
});
