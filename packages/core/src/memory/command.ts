import type { ChannelPeople, ConversationRef } from '../channel.js';
import type { MemoryListing } from './desk.js';
import { memoryListingText } from './desk.js';
import { memoryLine } from './tools.js';

/** What `/memory` and `/memory forget <id>` answer (part of `ChatCommandResult`). */
export type MemoryCommandResult =
  /** `/memory`: the newest memories the person sees here. */
  | { command: 'memory'; outcome: 'memories'; listing: MemoryListing }
  /** `/memory forget <id>`: removed. */
  | { command: 'memory'; outcome: 'forgotten'; id: string }
  /** `/memory forget <id>` did nothing: no such memory the person can see, not theirs to remove, or no id given. */
  | { command: 'memory'; outcome: 'not_forgotten'; id: string; reason: string }
  /** Memory is not available on this channel. */
  | { command: 'memory'; outcome: 'memory_unavailable' };

/** Runs `/memory [forget <id>]` for a resolved principal. */
export async function runMemoryCommand(people: ChannelPeople, conversation: ConversationRef, principalId: string, args: string): Promise<MemoryCommandResult> {
  // In a room the answer would be read by everyone there (guests included): memories are listed in direct messages only.
  if (!people.memories || conversation.kind === 'room') return { command: 'memory', outcome: 'memory_unavailable' };
  const [sub = '', id = ''] = args.trim().split(/\s+/);
  if (sub.toLowerCase() !== 'forget') return { command: 'memory', outcome: 'memories', listing: await people.memories.list(conversation, principalId) };
  if (!id) return { command: 'memory', outcome: 'not_forgotten', id: '', reason: 'name the memory: /memory forget <id> (the ids are in /memory)' };
  const r = await people.memories.forget(conversation, principalId, id);
  if (r.outcome === 'forgotten') return { command: 'memory', outcome: 'forgotten', id: r.memory.id };
  return { command: 'memory', outcome: 'not_forgotten', id, reason: r.outcome === 'refused' ? r.reason : `there is no memory ${id} you can see here` };
}

/** A `/memory` result in plain text (Telegram, and Slack after escaping). */
export function memoryCommandText(r: MemoryCommandResult): string {
  switch (r.outcome) {
    case 'memories':
      return memoryListingText(r.listing, memoryLine);
    case 'forgotten':
      return `Forgot ${r.id}.`;
    case 'not_forgotten':
      return `Nothing removed: ${r.reason}.`;
    case 'memory_unavailable':
      return 'Memory is not available here (in a group chat, ask me in a direct message).';
  }
}
