import { describe, expect, it } from 'vitest';
import { ChatCommands, MODE_ORDER, type ChannelPeople, type ContextReport, type ConversationRef, type SessionStatus } from '../src/index.js';

const conversation: ConversationRef = { channel: 'telegram', account: 'main', id: '42', kind: 'dm' };
const status: SessionStatus = { sessionId: 's1', model: 'm', mode: 'default', queueMode: 'followup', entries: 3, pendingApprovals: 1, running: true };
const report: ContextReport = {
  model: 'm',
  tokens: 1200,
  contextWindow: 50_000,
  window: 45_000,
  messages: 4,
  clearedResults: 0,
  lastCompaction: null,
  consumers: [{ name: 'history', tokens: 1000 }],
};

/** People whose one known identity is `telegram:1` (principal p1); every call is logged. */
function people(over: Partial<ChannelPeople> = {}): ChannelPeople & { calls: string[] } {
  const calls: string[] = [];
  const base: ChannelPeople = {
    principalFor: async (identity) => {
      calls.push(`principalFor ${identity}`);
      return identity === 'telegram:1' ? { principalId: 'p1', role: 'member' } : null;
    },
    updateSession: async () => ({ sessionId: 's1', queueMode: 'followup' }),
    resetSession: async (c, p) => {
      calls.push(`reset ${c.id} ${p}`);
    },
    sessionStatus: async (c, p) => {
      calls.push(`status ${c.id} ${p}`);
      return status;
    },
    setMode: async (_c, p, mode) => {
      calls.push(`setMode ${p} ${mode}`);
      return mode === 'plan' ? { ok: true, mode } : { ok: false, reason: 'not for your role' };
    },
    stopRunning: async (_c, p) => {
      calls.push(`stop ${p}`);
      return true;
    },
    contextReport: async (c, p) => {
      calls.push(`context ${c.id} ${p}`);
      return report;
    },
    abortTurn: async () => false,
  };
  return Object.assign({ ...base, ...over }, { calls });
}

const run = (commands: ChatCommands, name: string, args = '', identity = 'telegram:1') => commands.run({ name, args, conversation, identity });

describe('ChatCommands', () => {
  it('lists /new, /status, /stop, /mode, /context in menu order and knows them in any case', () => {
    const commands = new ChatCommands(people());
    expect(commands.list.map((c) => c.command)).toEqual(['new', 'status', 'stop', 'mode', 'compact', 'context', 'usage', 'memory', 'profile']);
    expect(commands.list.every((c) => c.description.length > 0)).toBe(true);
    expect(commands.has('new')).toBe(true);
    expect(commands.has('MODE')).toBe(true);
    expect(commands.has('reset')).toBe(false);
    expect(commands.has('start')).toBe(false);
  });

  it('does nothing for a sender who is not a principal', async () => {
    const p = people();
    expect(await run(new ChatCommands(p), 'new', '', 'telegram:2')).toEqual({ command: 'new', outcome: 'not_paired' });
    expect(p.calls).toEqual(['principalFor telegram:2']);
  });

  it('runs each command as the sender principal and answers data', async () => {
    const p = people();
    const commands = new ChatCommands(p);
    expect(await run(commands, 'NEW')).toEqual({ command: 'new', outcome: 'reset' });
    expect(await run(commands, 'stop')).toEqual({ command: 'stop', outcome: 'stopped' });
    expect(await run(commands, 'status')).toEqual({ command: 'status', outcome: 'status', status });
    expect(await run(commands, 'mode', '  plan  extra')).toEqual({ command: 'mode', outcome: 'set', mode: 'plan' });
    expect(await run(commands, 'mode', 'bypassPermissions')).toEqual({ command: 'mode', outcome: 'refused', reason: 'not for your role' });
    expect(await run(commands, 'mode', '  ')).toEqual({ command: 'mode', outcome: 'usage', current: 'default', modes: MODE_ORDER });
    expect(p.calls.filter((c) => !c.startsWith('principalFor'))).toEqual([
      'reset 42 p1',
      'stop p1',
      'status 42 p1',
      'setMode p1 plan',
      'setMode p1 bypassPermissions',
      'status 42 p1',
    ]);
  });

  it('answers idle when nothing runs, and unknown (after the sender check) for other names', async () => {
    const commands = new ChatCommands(people({ stopRunning: async () => false }));
    expect(await run(commands, 'stop')).toEqual({ command: 'stop', outcome: 'idle' });
    expect(await run(commands, 'Frobnicate')).toEqual({ command: 'frobnicate', outcome: 'unknown' });
    expect(await run(commands, 'frobnicate', '', 'telegram:2')).toEqual({ command: 'frobnicate', outcome: 'not_paired' });
  });

  it('/context answers the report of the sender session; a channel-authenticated principal is not resolved again', async () => {
    const p = people();
    const commands = new ChatCommands(p);
    expect(await run(commands, 'Context')).toEqual({ command: 'context', outcome: 'report', report });
    const viaToken = await commands.run({ name: 'context', args: '', conversation, identity: 'ws:tok-1', principalId: 'p9' });
    expect(viaToken).toEqual({ command: 'context', outcome: 'report', report });
    expect(p.calls).toEqual(['principalFor telegram:1', 'context 42 p1', 'context 42 p9']);
  });

  it('rejects when the context does (storage errors are the channel to answer)', async () => {
    const boom = new Error('database is locked');
    const commands = new ChatCommands(
      people({
        resetSession: async () => {
          throw boom;
        },
      }),
    );
    await expect(run(commands, 'new')).rejects.toBe(boom);
  });
});
