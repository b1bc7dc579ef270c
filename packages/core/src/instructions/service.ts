import type { AfterTool, Message, SystemBlock } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { ApprovalBroker } from '../approvals/broker.js';
import type { AgentRuntime, TurnPolicyContext } from '../engine.js';
import type { Storage } from '../storage.js';
import { AGENTS_MD, InstructionGate } from './agents-md.js';
import { askToLoadFor } from './ask-load.js';
import { assembleSystem, channelFacts } from './layers.js';
import { NestedInstructions, notesIn, touchedFolder } from './nested.js';

/** The resolved instruction settings (config `agentsMd`). */
export interface InstructionSettings {
  /** The cap of the root `AGENTS.md` (and of each nested note) the model sees, in bytes. */
  agentsMdMaxBytes: number;
  /** Whether nested `AGENTS.md` files load when a tool touches their folder. */
  nested: boolean;
}

/** What one turn asks the instruction layer for. */
export interface TurnInstructionContext extends TurnPolicyContext {
  /** The turn's workspace (the person's or the room's). */
  workspace: string;
  /** The conversation the turn starts from (since the last compaction boundary). */
  messages: readonly Message[];
  signal: AbortSignal;
}

/** One turn's instructions: its system prompt, and the nested notes the loop injects. */
export interface TurnInstructions {
  system: SystemBlock[];
  /** After each tool call: records approved writes to `AGENTS.md` and queues nested notes. Never throws. */
  afterTool: AfterTool;
  /** The notes waiting for the next model call (each once); see `DrainInjected`. */
  drainNotes(): string[];
}

/** The engine's source of per-turn instructions (`EngineOptions.instructions`). */
export interface TurnInstructionSource {
  /** The person's time zone from their profile (a DM with a known person), else undefined. */
  timezone(ctx: Pick<TurnPolicyContext, 'message' | 'session'>): Promise<string | undefined>;
  forTurn(ctx: TurnInstructionContext): Promise<TurnInstructions>;
}

/** What an {@link InstructionService} works with. */
export interface InstructionServiceOptions {
  storage: Storage;
  broker: ApprovalBroker;
  settings: InstructionSettings;
  log: Logger;
  /**
   * Whether the agent's person workspaces are each person's own (`workspace.mode: "per-person"`).
   * In a shared workspace an `AGENTS.md` may be anyone's, so no person layer or nested note loads
   * from it (the profile, stored per person, still does). Absent: per-person.
   */
  ownWorkspaces?: (agentId: string) => boolean;
}

/** The person a turn's own layers belong to: a DM's known speaker; nobody in a room. */
function personOf(ctx: Pick<TurnPolicyContext, 'message' | 'session'>): string | undefined {
  if (ctx.message.kind !== 'dm') return undefined;
  return ctx.message.principalId ?? (ctx.session.scope === 'dm' ? (ctx.session.principalId ?? undefined) : undefined);
}

/**
 * Assembles each turn's layered system prompt (docs/instructions.md): the agent's operator blocks
 * (gateway, then agent, built at start-up), then — in a DM with a known person only — the
 * person's approved root `AGENTS.md` and profile, then the channel's facts; and lazily loads
 * nested `AGENTS.md` notes as tools touch folders.
 */
export class InstructionService implements TurnInstructionSource {
  /** The nested notes each session loaded (by session id), re-injected once after a compaction boundary drops them. */
  private readonly loaded = new Map<string, Set<string>>();

  constructor(private readonly options: InstructionServiceOptions) {}

  async timezone(ctx: Pick<TurnPolicyContext, 'message' | 'session'>): Promise<string | undefined> {
    const person = personOf(ctx);
    if (!person) return undefined;
    const stored = await this.options.storage.profiles.get(person).catch(() => null);
    return stored?.profile.timezone;
  }

  async forTurn(ctx: TurnInstructionContext): Promise<TurnInstructions> {
    const { storage, settings, log } = this.options;
    const facts = channelFacts(ctx.message.channel, ctx.message.kind);
    const operator = operatorLayers(ctx.agent);
    const person = personOf(ctx);
    if (!person) {
      // A room (or a sender the gateway knows no principal for): no person's layers, no nested notes.
      return { system: assembleSystem({ operator, channel: facts }), afterTool: async () => undefined, drainNotes: () => [] };
    }
    const profile = (await storage.profiles.get(person))?.profile;
    if (this.options.ownWorkspaces && !this.options.ownWorkspaces(ctx.agent.id)) {
      // A shared workspace: its AGENTS.md files may be another person's words, never this person's layer.
      return { system: assembleSystem({ operator, ...(profile ? { profile } : {}), channel: facts }), afterTool: async () => undefined, drainNotes: () => [] };
    }
    const gate = new InstructionGate({
      workspace: ctx.workspace,
      maxBytes: settings.agentsMdMaxBytes,
      files: storage.instructionFiles,
      ask: askToLoadFor(this.options, ctx, person, ctx.signal),
    });
    const agentsMd = await gate.load('');
    const system = assembleSystem({
      operator,
      ...(agentsMd ? { agentsMd: { text: agentsMd.text, truncated: agentsMd.truncated, maxBytes: settings.agentsMdMaxBytes } } : {}),
      ...(profile ? { profile } : {}),
      channel: facts,
    });
    let loaded = this.loaded.get(ctx.session.id);
    if (!loaded) {
      loaded = new Set();
      this.loaded.set(ctx.session.id, loaded);
    }
    const nested = settings.nested ? new NestedInstructions(gate, ctx.workspace, settings.agentsMdMaxBytes, notesIn(ctx.messages), loaded) : undefined;
    await nested?.reinject();
    const afterTool: AfterTool = async ({ tool, input, result }) => {
      try {
        // An approved write_file of an AGENTS.md: its whole new content is what the person approved.
        // (An edit_file changes part of a file whose rest may never have been approved: it asks at the next load.)
        if (tool.name === 'write_file' && !result.is_error && tool.ruleContent) {
          const path = tool.ruleContent(input);
          if (path.split('/').at(-1) === AGENTS_MD) {
            const folder = await touchedFolder(ctx.workspace, path);
            if (folder !== undefined) await gate.recordWrite(folder);
          }
        }
        await nested?.touched(tool, input);
      } catch (err) {
        log.warn({ err, tool: tool.name }, 'instruction bookkeeping after a tool call failed');
      }
      return undefined;
    };
    return { system, afterTool, drainNotes: () => nested?.drain() ?? [] };
  }
}

/** The agent's operator blocks (gateway, then agent), as built at start-up. */
function operatorLayers(agent: AgentRuntime): SystemBlock[] {
  return agent.system.map((b) => ({ type: 'text', text: b.text }));
}
