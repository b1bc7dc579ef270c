import type { ChannelCommands, ChannelPeople, ConversationRef, SessionStatus } from './channel.js';
import type { ContextReport } from './context/context-report.js';
import type { PersonalUsage } from './budgets/service.js';
import { MODE_ORDER } from './permissions/modes.js';
import { runMemoryCommand, type MemoryCommandResult } from './memory/command.js';
import { type ProfileCommandResult, runProfileCommand } from './instructions/profile-command.js';

/** One chat command as a menu shows it. */
export interface ChatCommandSpec {
  /** The name without the slash, lower case. */
  readonly command: string;
  /** One line for a command menu (Telegram's setMyCommands). */
  readonly description: string;
}

/** What a channel hands the runner: the command its platform syntax named, and who sent it where. */
export interface ChatCommandInput {
  /** The command name without the slash (any case). */
  name: string;
  /** The text after the command name (may be empty). */
  args: string;
  conversation: ConversationRef;
  /** The sender's identity (`telegram:<userId>`, `slack:<team>:<user>`): resolved to a principal here. */
  identity: string;
  /**
   * The sender's principal when the channel authenticated the sender itself (WebSocket: the
   * client token's principal); then `identity` is not resolved. Never a principal id taken from
   * platform input.
   */
  principalId?: string;
}

/**
 * What a command did, as data: the channel turns it into its own words and markup. `command` is
 * the canonical (lower-case) name the input named.
 */
export type ChatCommandResult =
  /** The sender is not a known principal: nothing was done. */
  | { command: string; outcome: 'not_paired' }
  /** Not a command the runner knows (channels check {@link ChannelCommands.has} first, or show their usage). */
  | { command: string; outcome: 'unknown' }
  /** `/new`: the conversation's session ended; the next message starts an empty history. */
  | { command: 'new'; outcome: 'reset' }
  /** `/stop`: whether a running answer was stopped. */
  | { command: 'stop'; outcome: 'stopped' | 'idle' }
  /** `/status`: the session's settings and counts (never a secret). */
  | { command: 'status'; outcome: 'status'; status: SessionStatus }
  /** `/mode` without a mode: the current mode and the modes there are. */
  | { command: 'mode'; outcome: 'usage'; current: string; modes: readonly string[] }
  /** `/mode <m>`: the session's mode is now `mode`. */
  | { command: 'mode'; outcome: 'set'; mode: string }
  /** `/mode <m>` refused (the role or a broader scope does not allow it, or no such mode). */
  | { command: 'mode'; outcome: 'refused'; reason: string }
  /** `/compact [instructions]`: the session's history before its last turns is now a summary (estimated request tokens before and after). */
  | { command: 'compact'; outcome: 'compacted'; tokensBefore: number; tokensAfter: number }
  /**
   * `/compact` did nothing: `busy` (a turn runs or waits; try again when it has finished),
   * `nothing` (too little history), `admins_only` (a shared room session), `failed` (the summary
   * call failed; nothing changed), `unavailable` (this channel cannot compact).
   */
  | { command: 'compact'; outcome: 'not_compacted'; reason: CompactRefusal }
  /** `/context`: how full the session's next request is, the window, the last compaction and what fills the request. */
  | { command: 'context'; outcome: 'report'; report: ContextReport }
  /** `/usage`: the person's own spend today and this month, each with the budget that applies and when it resets. */
  | { command: 'usage'; outcome: 'spend'; usage: PersonalUsage }
  /** `/memory [forget <id>]`: the person's memories here, or one removed (see `MemoryCommandResult`). */
  | MemoryCommandResult
  /** `/profile`: the person's own profile, shown or changed (instructions/profile-command.ts). */
  | ProfileCommandResult;

/** Why `/compact` did nothing (see the `not_compacted` result). */
export type CompactRefusal = 'busy' | 'nothing' | 'admins_only' | 'failed' | 'unavailable';

/** Why `/compact` did nothing, in the words every chat shows (plain text). */
export const COMPACT_REFUSAL_TEXT: Readonly<Record<CompactRefusal, string>> = {
  busy: 'Not compacted: an answer is in progress. Try again when it has finished.',
  nothing: 'Not compacted: the conversation is still short.',
  admins_only: 'Not compacted: in a shared conversation, only owners and admins can compact it.',
  failed: 'Not compacted: the summary could not be written. Nothing changed; try again later.',
  unavailable: 'Compaction is not available here.',
};

/** What `/compact` did, in the words every chat shows (plain text). */
export function compactedText(tokensBefore: number, tokensAfter: number): string {
  return `Compacted the conversation: about ${tokensBefore} → ${tokensAfter} tokens. The full history stays in the transcript.`;
}

/** What one command does once the sender is known. */
type Handler = (people: ChannelPeople, conversation: ConversationRef, principalId: string, args: string) => Promise<ChatCommandResult>;

interface CommandDef extends ChatCommandSpec {
  readonly run: Handler;
}

/** The commands, in menu order. A new command is one entry here (and its formatting in each channel). */
const COMMANDS: readonly CommandDef[] = [
  {
    command: 'new',
    description: 'Start a fresh session',
    run: async (people, conversation, principalId) => {
      await people.resetSession(conversation, principalId);
      return { command: 'new', outcome: 'reset' };
    },
  },
  {
    command: 'status',
    description: 'Show model, mode and session status',
    run: async (people, conversation, principalId) => ({ command: 'status', outcome: 'status', status: await people.sessionStatus(conversation, principalId) }),
  },
  {
    command: 'stop',
    description: 'Stop the running answer',
    run: async (people, conversation, principalId) => ({
      command: 'stop',
      outcome: (await people.stopRunning(conversation, principalId)) ? 'stopped' : 'idle',
    }),
  },
  {
    command: 'mode',
    description: 'Change the permission mode: /mode <mode>',
    run: async (people, conversation, principalId, args) => {
      const mode = args.trim().split(/\s+/)[0] ?? '';
      if (!mode) return { command: 'mode', outcome: 'usage', current: (await people.sessionStatus(conversation, principalId)).mode, modes: MODE_ORDER };
      const r = await people.setMode(conversation, principalId, mode);
      return r.ok ? { command: 'mode', outcome: 'set', mode: r.mode } : { command: 'mode', outcome: 'refused', reason: r.reason };
    },
  },
  {
    command: 'compact',
    description: 'Summarize the conversation so far: /compact [instructions]',
    run: async (people, conversation, principalId, args) => {
      if (!people.compactSession) return { command: 'compact', outcome: 'not_compacted', reason: 'unavailable' };
      const r = await people.compactSession(conversation, principalId, args.trim());
      if (r.outcome === 'compacted') return { command: 'compact', outcome: 'compacted', tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter };
      return { command: 'compact', outcome: 'not_compacted', reason: r.outcome };
    },
  },
  {
    command: 'context',
    description: 'Show how full the context is and what fills it',
    run: async (people, conversation, principalId) => ({
      command: 'context',
      outcome: 'report',
      report: await people.contextReport(conversation, principalId),
    }),
  },
  {
    command: 'usage',
    description: 'Show what you spent today and this month, and your budget',
    run: async (people, conversation, principalId) => ({ command: 'usage', outcome: 'spend', usage: await people.usage(conversation, principalId) }),
  },
  {
    command: 'memory',
    description: 'Show what I remember about you: /memory, /memory forget <id>',
    run: runMemoryCommand,
  },
  {
    command: 'profile',
    description: 'Show or set your profile: /profile <field> <value>, /profile clear <field>',
    run: async (people, conversation, principalId, args) => runProfileCommand(people, principalId, args, conversation),
  },
];

/**
 * The chat-command runner ({@link ChannelCommands}) over a context's {@link ChannelPeople}: parses
 * the command's arguments, resolves the sender, calls the context and answers a
 * {@link ChatCommandResult}. Channels parse their platform's syntax and format the result.
 */
export class ChatCommands implements ChannelCommands {
  readonly list: readonly ChatCommandSpec[] = COMMANDS.map(({ command, description }) => ({ command, description }));
  private readonly byName = new Map<string, CommandDef>(COMMANDS.map((c) => [c.command, c]));

  constructor(private readonly people: ChannelPeople) {}

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase());
  }

  async run(input: ChatCommandInput): Promise<ChatCommandResult> {
    const command = input.name.toLowerCase();
    const who = input.principalId !== undefined ? { principalId: input.principalId } : await this.people.principalFor(input.identity);
    if (!who) return { command, outcome: 'not_paired' };
    const def = this.byName.get(command);
    if (!def) return { command, outcome: 'unknown' };
    return def.run(this.people, input.conversation, who.principalId, input.args);
  }
}
