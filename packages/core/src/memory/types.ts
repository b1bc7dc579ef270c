/** Whose a memory is: one person's (`private`) or an agent's team (`team`). */
export type MemoryScope = 'private' | 'team';

/** One long-term memory (see docs/memory.md). */
export interface Memory {
  /** `mem_` and 12 hex digits: short enough to type in `/memory forget <id>`. */
  id: string;
  scope: MemoryScope;
  /** Private memories: the person they belong to; null for team memories. */
  principalId: string | null;
  /** Team memories: the agent whose team they belong to; null for private memories. */
  agentId: string | null;
  text: string;
  tags: string[];
  /** The principal whose turn (or command) saved it; null when unknown. */
  createdBy: string | null;
  createdAt: Date;
}

/** A memory to store: a private one names its principal, a team one its agent. */
export type NewMemory =
  | { scope: 'private'; principalId: string; text: string; tags: readonly string[]; createdBy: string | null }
  | { scope: 'team'; agentId: string; text: string; tags: readonly string[]; createdBy: string | null };

/** Which memories a read may see: any of the listed scopes (an empty list sees nothing). */
export type MemoryScopeRef = { scope: 'private'; principalId: string } | { scope: 'team'; agentId: string };

/** A full-text search over memories. */
export interface MemorySearch {
  /**
   * What the person or model typed: plain words, never query syntax. Implementations turn it
   * into their engine's query themselves (quoted terms) and never throw on any string.
   */
  text: string;
  scopes: readonly MemoryScopeRef[];
  /** At most this many results (implementations cap it at 50). */
  limit: number;
}

/** A search hit: the memory and its rank (lower is better; only the order is meaningful). */
export interface MemoryHit {
  memory: Memory;
  rank: number;
}

/** The `memories` repository of `Storage` (each method one transaction). */
export interface MemoryRepo {
  /** Stores a new memory with a fresh id. */
  save(m: NewMemory): Promise<Memory>;
  get(id: string): Promise<Memory | null>;
  /** Best matches first; terms are OR-ed and ranked (bm25 in SQLite). Never throws for any `text`. */
  search(q: MemorySearch): Promise<MemoryHit[]>;
  /** The memories of the given scopes, newest first. */
  list(scopes: readonly MemoryScopeRef[], opts?: { limit?: number; offset?: number }): Promise<Memory[]>;
  /** How many memories the given scopes hold. */
  count(scopes: readonly MemoryScopeRef[]): Promise<number>;
  /** Deletes one memory; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Deletes every private memory of a principal; returns how many. Team memories they saved stay (they are the team's). */
  deleteOfPrincipal(principalId: string): Promise<number>;
}
