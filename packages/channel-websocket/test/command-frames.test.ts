import { ChatCommands, type ChannelPeople, type ChatCommandInput, type ChatCommandResult, type ContextReport } from '@switchboard/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commandFrame, commandName, runCommandFrame } from '../src/command-frames.js';
import { clientFrame, MAX_COMMAND_ARGS } from '../src/frames.js';

const KNOWN = ['new', 'status', 'stop', 'mode', 'context'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'then'];

/** What a well-formed command frame is, written out independently of the zod schema. */
function isValidCommand(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  if (keys.some((k) => k !== 'type' && k !== 'name' && k !== 'args')) return false;
  const f = v as Record<string, unknown>;
  if (f.type !== 'command' || typeof f.name !== 'string' || !/^\/?[A-Za-z0-9_-]{1,32}$/.test(f.name)) return false;
  return f.args === undefined ? !keys.includes('args') : typeof f.args === 'string' && f.args.length <= MAX_COMMAND_ARGS;
}

/** Near-valid and hostile command frames: every field missing, mistyped, oversized or a prototype key. */
const hostileField = fc.oneof(
  fc.constantFrom(...PROTO_KEYS, '', '/', '//x', 'con text', 'x'.repeat(33), '/'.concat('y'.repeat(32)), 'ctx\n', '🦄', '\u0000'),
  fc.string({ maxLength: 40 }),
  fc.stringMatching(/^\/?[A-Za-z0-9_-]{1,32}$/),
  fc.anything(),
);
const hostileFrame = fc.oneof(
  fc.record(
    {
      type: fc.oneof(fc.constant('command'), fc.anything()),
      name: hostileField,
      args: fc.oneof(fc.string({ maxLength: 50 }), fc.constant('a'.repeat(MAX_COMMAND_ARGS + 1)), fc.constant('a'.repeat(MAX_COMMAND_ARGS)), fc.anything()),
      [PROTO_KEYS[0]!]: fc.anything(),
      extra: fc.anything(),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    { type: fc.constant('command'), name: fc.stringMatching(/^\/?[A-Za-z0-9_-]{1,32}$/), args: fc.string({ maxLength: 50 }) },
    { requiredKeys: ['type', 'name'] },
  ),
  fc.anything(),
  fc.jsonValue().map((v) => JSON.parse(JSON.stringify({ type: 'command', name: 'context', ...(typeof v === 'object' && v !== null ? v : { v }) }))),
);

describe('the command frame (parsing)', () => {
  it('accepts exactly the well-formed command frames and never throws, whatever the shape', () => {
    const seen = { valid: 0, invalid: 0 };
    fc.assert(
      fc.property(hostileFrame, (raw) => {
        // Frames arrive as JSON text: what the schema sees is what JSON.parse gives.
        let value: unknown;
        try {
          value = JSON.parse(JSON.stringify(raw) ?? 'null');
        } catch {
          return; // a value JSON cannot carry (a BigInt, a cycle) never reaches the parser
        }
        const parsed = clientFrame.safeParse(value);
        const valid = isValidCommand(value);
        seen[valid ? 'valid' : 'invalid']++;
        if ((value as { type?: unknown } | null)?.type === 'command') expect(parsed.success).toBe(valid);
        if (parsed.success && parsed.data.type === 'command') {
          expect(valid).toBe(true);
          const name = commandName(parsed.data.name);
          expect(name).toMatch(/^[a-z0-9_-]{1,32}$/);
        }
      }),
      { numRuns: 2000 },
    );
    // Both sides of the property were exercised.
    expect(seen.valid).toBeGreaterThan(50);
    expect(seen.invalid).toBeGreaterThan(500);
  });

  it('takes the name with or without one slash, in any case', () => {
    expect(commandName('/CONTEXT')).toBe('context');
    expect(commandName('Mode')).toBe('mode');
    expect(clientFrame.safeParse({ type: 'command', name: '//context' }).success).toBe(false);
    expect(clientFrame.safeParse({ type: 'command', name: 'mode', args: 'plan' }).success).toBe(true);
  });
});

const report: ContextReport = {
  model: 'm',
  tokens: 10,
  contextWindow: 200_000,
  window: 180_000,
  messages: 1,
  clearedResults: 0,
  lastCompaction: null,
  consumers: [{ name: 'history', tokens: 10 }],
};

describe('the frame a command result answers', () => {
  it('maps every result of the runner to one frame', () => {
    const cases: Array<[ChatCommandResult, unknown]> = [
      [
        { command: 'status', outcome: 'not_paired' },
        { type: 'error', code: 'not_paired' },
      ],
      [
        { command: 'frob', outcome: 'unknown' },
        { type: 'error', code: 'unknown_command', message: expect.stringContaining('new, status, stop, mode, context') },
      ],
      [{ command: 'new', outcome: 'reset' }, { type: 'session_reset' }],
      [
        { command: 'mode', outcome: 'set', mode: 'plan' },
        { type: 'mode_ok', mode: 'plan' },
      ],
      [
        { command: 'mode', outcome: 'refused', reason: 'not for your role' },
        { type: 'error', code: 'mode_refused', message: 'not for your role' },
      ],
      [
        { command: 'stop', outcome: 'idle' },
        { type: 'command_result', command: 'stop', outcome: 'idle' },
      ],
      [
        { command: 'mode', outcome: 'usage', current: 'default', modes: ['plan'] },
        { type: 'command_result', command: 'mode', outcome: 'usage', current: 'default', modes: ['plan'] },
      ],
      [
        { command: 'context', outcome: 'report', report },
        { type: 'context', outcome: 'report', report },
      ],
    ];
    for (const [result, frame] of cases) expect(commandFrame(result, KNOWN)).toEqual(expect.objectContaining(frame as object));
    expect(commandFrame({ command: 'context', outcome: 'report', report }, KNOWN)).toEqual({ type: 'context', outcome: 'report', report });
  });

  it("gives /usage and /compact results their own frames, with the result's fields", () => {
    const usage = {
      timezone: 'Europe/Berlin',
      periods: [
        { period: 'day' as const, tokens: 5, usd: 0.001, resetsAt: '2026-12-01T23:00:00.000Z', limit: { scope: 'role' as const, id: 'member', tokens: 5000 } },
        { period: 'month' as const, tokens: 5, usd: 0.001, resetsAt: '2026-12-31T23:00:00.000Z' },
      ],
    };
    expect(commandFrame({ command: 'usage', outcome: 'spend', usage }, KNOWN)).toEqual({ type: 'usage', outcome: 'spend', usage });
    expect(commandFrame({ command: 'compact', outcome: 'compacted', tokensBefore: 9, tokensAfter: 1 }, KNOWN)).toEqual({
      type: 'compacted',
      outcome: 'compacted',
      tokensBefore: 9,
      tokensAfter: 1,
    });
    // A compaction that did nothing is a `compacted` frame with its reason, not an error frame (only `refused` results are).
    for (const reason of ['busy', 'nothing', 'admins_only', 'failed', 'unavailable'] as const) {
      expect(commandFrame({ command: 'compact', outcome: 'not_compacted', reason }, KNOWN)).toEqual({ type: 'compacted', outcome: 'not_compacted', reason });
    }
  });
});

describe('runCommandFrame', () => {
  function commands(): { commands: ChatCommands; calls: ChatCommandInput[] } {
    const calls: ChatCommandInput[] = [];
    const fail = async (): Promise<never> => {
      throw new Error('not under test');
    };
    const people: ChannelPeople = {
      principalFor: fail,
      updateSession: fail,
      resetSession: async () => undefined,
      sessionStatus: fail,
      contextReport: async () => report,
      setMode: fail,
      stopRunning: async () => false,
      abortTurn: fail,
    };
    const inner = new ChatCommands(people);
    const spy = Object.assign(Object.create(inner) as ChatCommands, {
      run: (input: ChatCommandInput) => {
        calls.push(input);
        return inner.run(input);
      },
    });
    return { commands: spy, calls };
  }
  const sender = { principalId: 'p1', identity: 'ws:tok-1', conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' as const } };

  it('runs a known command as the authenticated principal (never resolving the identity) and answers its frame', async () => {
    const { commands: c, calls } = commands();
    expect(await runCommandFrame(c, { type: 'command', name: '/Context' }, sender)).toEqual({ type: 'context', outcome: 'report', report });
    expect(calls).toEqual([{ name: 'context', args: '', conversation: sender.conversation, identity: 'ws:tok-1', principalId: 'p1' }]);
  });

  it('answers unknown names — prototype keys included — without running anything', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.stringMatching(/^\/?[A-Za-z0-9_-]{1,32}$/)), async (name) => {
        const { commands: c, calls } = commands();
        const frame = await runCommandFrame(c, { type: 'command', name }, sender);
        if (KNOWN.includes(commandName(name))) return;
        expect(frame).toMatchObject({ type: 'error', code: 'unknown_command' });
        expect(calls).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});
