import type { Storage } from '../storage.js';
import { callerOf, teamWriteAccess, visible, visibleScopes, type MemoryCaller } from './access.js';
import type { Memory } from './types.js';

/** What `/memory` lists: the newest memories the person sees here, and how many there are. */
export interface MemoryListing {
  /** `private` in a direct conversation (the person's own, then team ones), `team` in a room. */
  where: 'dm' | 'room';
  memories: Memory[];
  total: number;
}

/** How `/memory forget <id>` (or an operator's delete) ended. */
export type ForgetOutcome = { outcome: 'forgotten'; memory: Memory } | { outcome: 'not_found' } | { outcome: 'refused'; reason: string };

/** How many memories `/memory` shows. */
export const MEMORY_LIST_MAX = 20;

/**
 * Memory management outside the model's tools: `/memory` in chat and the control API. Every
 * change is audited. Reads and deletes follow the same scopes as the tools (see `visibleScopes`).
 */
export class MemoryDesk {
  constructor(private readonly storage: Pick<Storage, 'memories' | 'principals' | 'audit'>) {}

  /** The caller's role and room flag from the store (see `callerOf`). */
  caller(principalId: string, agentId: string, room: boolean): Promise<MemoryCaller> {
    return callerOf(this.storage, { principalId, agentId, roomSession: room });
  }

  /** What `/memory` shows the caller here (newest first, at most {@link MEMORY_LIST_MAX}). */
  async list(caller: MemoryCaller): Promise<MemoryListing> {
    const scopes = visibleScopes(caller);
    const [memories, total] = await Promise.all([this.storage.memories.list(scopes, { limit: MEMORY_LIST_MAX }), this.storage.memories.count(scopes)]);
    return { where: caller.room ? 'room' : 'dm', memories, total };
  }

  /** `/memory forget <id>`: the caller's own private memory, or a team memory if they write team memory directly (owner, admin). */
  async forget(caller: MemoryCaller, id: string): Promise<ForgetOutcome> {
    const m = await this.storage.memories.get(id.trim());
    if (!m || !visible(caller, m)) return { outcome: 'not_found' };
    const team = m.scope === 'team';
    if (team && teamWriteAccess(caller.role) !== 'direct') {
      return {
        outcome: 'refused',
        reason: 'only an owner or admin can remove team memories; ask one of them (or ask me to forget it, which they then approve)',
      };
    }
    if (!(await this.storage.memories.delete(m.id))) return { outcome: 'not_found' };
    await this.storage.audit.append({
      actor: `principal:${caller.principalId}`,
      action: 'memory.forget',
      target: m.id,
      detail: { scope: m.scope, by: 'command' },
    });
    return { outcome: 'forgotten', memory: m };
  }
}

/** `/memory` and its results in plain text, the words every chat shows. */
export function memoryListingText(l: MemoryListing, line: (m: Memory) => string): string {
  if (l.total === 0) {
    return l.where === 'room'
      ? 'No team memories yet. In a shared room only team memory is used; your private memories stay in direct messages.'
      : 'I have not saved anything about you yet. Memories are saved only by a visible memory_save call.';
  }
  const head = l.where === 'room' ? `Team memories (${l.total}):` : `What I remember (${l.total}):`;
  const more = l.total > l.memories.length ? [`… and ${l.total - l.memories.length} older.`] : [];
  return [head, ...l.memories.map(line), ...more, 'Remove one with /memory forget <id>.'].join('\n');
}
