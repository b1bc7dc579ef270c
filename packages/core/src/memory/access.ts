import type { Approval, Role, Storage } from '../storage.js';
import type { Memory, MemoryScopeRef } from './types.js';

/** The memory tools' names (`group:memory`). */
export const MEMORY_TOOLS = ['memory_save', 'memory_search', 'memory_forget'] as const;

/** Who is asking, as the turn policy resolved it from the inbound message (never from the model). */
export interface MemoryCaller {
  /** The speaker's principal; absent: a sender the gateway knows no principal for. */
  principalId?: string | undefined;
  /** The speaker's role (looked up from the principal). */
  role: Role | 'guest';
  agentId: string;
  /** A room session (several people share it): private memories are off there. */
  room: boolean;
}

/** Roles that read team memory (the team's members). */
const TEAM_READERS: ReadonlySet<string> = new Set(['owner', 'admin', 'member']);
/** Roles that write team memory without an approval. */
const TEAM_WRITERS: ReadonlySet<string> = new Set(['owner', 'admin']);

/** How a caller may write team memory: directly, only with an owner's or admin's approval, or not at all. */
export function teamWriteAccess(role: string): 'direct' | 'approval' | 'none' {
  if (TEAM_WRITERS.has(role)) return 'direct';
  return role === 'member' ? 'approval' : 'none';
}

/** Whether the caller reads the agent's team memory. */
export const readsTeam = (role: string): boolean => TEAM_READERS.has(role);

/**
 * The scopes a caller's search and list see: their own private memories (not in a room) and the
 * agent's team memory (members and above). `which` narrows it to one scope.
 */
export function visibleScopes(caller: MemoryCaller, which: 'all' | 'private' | 'team' = 'all'): MemoryScopeRef[] {
  const out: MemoryScopeRef[] = [];
  if (which !== 'team' && caller.principalId && !caller.room) out.push({ scope: 'private', principalId: caller.principalId });
  if (which !== 'private' && caller.principalId && readsTeam(caller.role)) out.push({ scope: 'team', agentId: caller.agentId });
  return out;
}

/** Whether the caller may see this memory at all (else it reads as "not found"); the same scopes as {@link visibleScopes}. */
export function visible(caller: MemoryCaller, m: Pick<Memory, 'scope' | 'principalId' | 'agentId'>): boolean {
  if (m.scope === 'private') return !caller.room && caller.principalId !== undefined && m.principalId === caller.principalId;
  return caller.principalId !== undefined && m.agentId === caller.agentId && readsTeam(caller.role);
}

/** The caller's role from the store (`guest` without a principal or for an unknown one). */
export async function callerOf(
  storage: Pick<Storage, 'principals'>,
  ctx: { principalId?: string; roomSession?: boolean; agentId: string },
): Promise<MemoryCaller> {
  const principal = ctx.principalId ? await storage.principals.get(ctx.principalId) : null;
  return { principalId: principal?.id, role: principal?.role ?? 'guest', agentId: ctx.agentId, room: ctx.roomSession === true };
}

/**
 * Whether an approval may only be answered by an owner or admin (never by the requester through
 * `permissions.selfApproveRoles`): every approval of `memory_forget`, and of `memory_save` unless
 * its input names the private scope. The broker checks this in `mayDecide`.
 */
export function needsAdminApproval(approval: Pick<Approval, 'tool' | 'input'>): boolean {
  if (approval.tool === 'memory_forget') return true;
  if (approval.tool !== 'memory_save') return false;
  const input = approval.input;
  return typeof input === 'object' && input !== null && Object.hasOwn(input, 'scope') && (input as { scope?: unknown }).scope === 'team';
}

/**
 * Whether a stored approval allowed exactly this tool call (`turnId`, `toolUseId`): the memory
 * tools check it before a member's write to team memory runs, so that no mode (not even
 * `bypassPermissions`, which skips a tool's own ask) lets one through without an approval.
 */
export async function approvedCall(storage: Pick<Storage, 'approvals'>, turnId: string, toolUseId: string, tool: string): Promise<boolean> {
  const list = await storage.approvals.list({ turnId });
  return list.some((a) => a.toolUseId === toolUseId && a.tool === tool && a.status === 'allowed');
}
