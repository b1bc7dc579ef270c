import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ApprovalBroker } from '../../src/approvals/broker.js';
import type { InboundMessage } from '../../src/channel.js';
import type { AgentRuntime } from '../../src/engine.js';
import { InstructionService, type TurnInstructionContext } from '../../src/instructions/service.js';
import type { Session, Storage, Turn } from '../../src/storage.js';

const workspace = mkdtempSync(join(tmpdir(), 'swb-instr-svc-'));
writeFileSync(join(workspace, 'AGENTS.md'), 'PERSON RULES');

/** A storage with Alice's profile and her AGENTS.md content already approved. */
function storage(): Storage {
  const approved = new Map<string, string>();
  return {
    profiles: {
      get: async (id: string) => (id === 'alice' ? { profile: { name: 'Alice', timezone: 'Asia/Tokyo' }, updatedBy: 'x', updatedAt: new Date() } : null),
      put: async () => true,
    },
    instructionFiles: {
      approved: async (w: string, p: string) => approved.get(`${w}:${p}`) ?? null,
      approve: async (w: string, p: string, h: string) => void approved.set(`${w}:${p}`, h),
    },
    turns: { setState: async () => undefined },
  } as unknown as Storage;
}

const broker = {
  request: async () => ({ allowed: true, by: 'principal:alice', approval: { id: 'a1' } }),
  waitStarted: () => undefined,
  waitEnded: () => true,
} as unknown as ApprovalBroker;

const agent: AgentRuntime = { id: 'default', system: [{ type: 'text', text: 'AGENT' }], tools: [], maxTurns: 5, workspace };

function ctx(kind: 'dm' | 'room', principalId: string | undefined): TurnInstructionContext {
  const message = {
    channel: 'slack',
    account: 'team',
    kind,
    conversation: { channel: 'slack', account: 'team', id: 'C1', kind },
    ...(principalId ? { principalId } : {}),
  } as unknown as InboundMessage;
  const session = { id: 's1', agentId: 'default', scope: kind === 'dm' ? 'dm' : 'room', principalId: null } as unknown as Session;
  return { session, turn: { id: 't1' } as Turn, message, agent, emit: () => {}, workspace, messages: [], signal: new AbortController().signal };
}

describe('InstructionService', () => {
  const service = () =>
    new InstructionService({ storage: storage(), broker, settings: { agentsMdMaxBytes: 1000, nested: true }, log: pino({ level: 'silent' }) });

  it('a DM with a known person gets AGENTS.md and the profile after the operator layers, and the profile’s zone', async () => {
    const s = service();
    const turn = await s.forTurn(ctx('dm', 'alice'));
    const text = turn.system.map((b) => b.text).join('\n');
    expect(turn.system[0]).toEqual({ type: 'text', text: 'AGENT', cacheBreakpoint: true });
    expect(text).toContain('PERSON RULES');
    expect(text).toContain('name: Alice');
    expect(text).toContain('Channel: slack, a direct message');
    expect(await s.timezone(ctx('dm', 'alice'))).toBe('Asia/Tokyo');
  });

  it('a room never loads the person’s layers nor their zone, whoever speaks', async () => {
    const s = service();
    const turn = await s.forTurn(ctx('room', 'alice'));
    const text = turn.system.map((b) => b.text).join('\n');
    expect(text).not.toContain('PERSON RULES');
    expect(text).not.toContain('Alice');
    expect(text).toContain('a room (several people share this conversation)');
    expect(turn.drainNotes()).toEqual([]);
    expect(await s.timezone(ctx('room', 'alice'))).toBeUndefined();
    expect(await s.timezone(ctx('dm', undefined))).toBeUndefined();
  });

  it('in a shared workspace no AGENTS.md is the person’s layer (it may be anyone’s); the profile still loads', async () => {
    const s = new InstructionService({
      storage: storage(),
      broker,
      settings: { agentsMdMaxBytes: 1000, nested: true },
      log: pino({ level: 'silent' }),
      ownWorkspaces: () => false,
    });
    const turn = await s.forTurn(ctx('dm', 'alice'));
    const text = turn.system.map((b) => b.text).join('\n');
    expect(text).not.toContain('PERSON RULES');
    expect(text).toContain('name: Alice');
  });

  it('only a write_file of an AGENTS.md records its content as approved; an edit_file leaves the next load to ask', async () => {
    const store = storage();
    const s = new InstructionService({ storage: store, broker, settings: { agentsMdMaxBytes: 1000, nested: true }, log: pino({ level: 'silent' }) });
    const turn = await s.forTurn(ctx('dm', 'alice'));
    const before = await store.instructionFiles.approved(workspace, 'AGENTS.md');
    writeFileSync(join(workspace, 'AGENTS.md'), 'EDITED BY AN EXEC RUN, THEN ONE LINE BY edit_file');
    const call = (name: string) => ({
      tool: { name, readOnly: false, ruleContent: () => 'AGENTS.md' } as never,
      input: {},
      result: { type: 'tool_result' as const, tool_use_id: 'x', content: 'ok' },
      ctx: {} as never,
    });
    await turn.afterTool(call('edit_file'));
    expect(await store.instructionFiles.approved(workspace, 'AGENTS.md')).toBe(before);
    await turn.afterTool(call('write_file'));
    expect(await store.instructionFiles.approved(workspace, 'AGENTS.md')).not.toBe(before);
    writeFileSync(join(workspace, 'AGENTS.md'), 'PERSON RULES');
  });
});
