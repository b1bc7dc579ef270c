import type { PermissionMode } from '../permissions/modes.js';
import { ownValue } from '../own.js';
import type { BucketLimit, BucketTake, SharedCounters } from '../shared-counters.js';

/** One room's settings: boundary (mention, senders) and its conversation-scope permissions. */
export interface RoomPolicy {
  requireMention: boolean;
  allowFrom: string[];
  /** The room's permission mode (conversation scope): lowers trust, never raises it. */
  mode?: PermissionMode;
  /** Tools or rules denied in this room (conversation-scope deny rules). */
  denyTools: string[];
}

/** The boundary settings of one channel account (config, with operators' overrides applied). */
export interface BoundaryPolicy {
  dmPolicy: 'pairing' | 'allowlist' | 'open' | 'disabled';
  allowFrom: string[];
  groupPolicy: 'allowlist' | 'open' | 'disabled';
  groups: Record<string, RoomPolicy>;
  requireMention: boolean;
  rateLimit: { burst: number; perMinute: number };
  pairingRole: 'owner' | 'admin' | 'member' | 'guest';
  /** The account's permission mode (channel scope; null: none set). */
  permissionMode: PermissionMode | null;
}

/** The boundary fields an operator may override, in a stable order. */
export const BOUNDARY_FIELDS = ['dmPolicy', 'allowFrom', 'groupPolicy', 'groups', 'requireMention', 'rateLimit', 'pairingRole', 'permissionMode'] as const;
export type BoundaryField = (typeof BOUNDARY_FIELDS)[number];

/** What the gate decided for one inbound message. */
export type GateDecision =
  | { decision: 'admitted'; principalId: string | null; autoLink: boolean }
  | { decision: 'pairing' }
  | { decision: 'refused'; reason: string; notify: string | null }
  | { decision: 'ignored'; reason: string }
  | { decision: 'rate_limited' };

export interface GateInput {
  kind: 'dm' | 'room';
  isBot: boolean;
  mentioned: boolean;
  /** The sender's id on the platform (the part after `<type>:` of the identity). */
  externalId: string;
  conversationId: string;
  /** The principal linked to this identity, if any. */
  principalId: string | null;
  /** Whether the sender authenticated with a credential (WebSocket client tokens). */
  authenticated: boolean;
}

/**
 * The boundary gate (DESIGN.md §1, layer 1): who may reach the assistant through this door.
 * Pure: rate limits and pairing side effects are the caller's.
 */
export function decideGate(p: BoundaryPolicy, m: GateInput): GateDecision {
  if (m.isBot) return { decision: 'ignored', reason: 'messages from bots are ignored' };
  const listed = (list: string[]) => list.includes('*') || list.includes(m.externalId);
  if (m.kind === 'room') {
    if (p.groupPolicy === 'disabled') return { decision: 'ignored', reason: 'rooms are disabled on this account' };
    const room = ownValue(p.groups, m.conversationId);
    if (!room && p.groupPolicy === 'allowlist') return { decision: 'ignored', reason: 'this room is not on the allowlist' };
    const requireMention = room ? room.requireMention : p.requireMention;
    if (requireMention && !m.mentioned) return { decision: 'ignored', reason: 'not mentioned' };
    if (room && room.allowFrom.length > 0 && !listed(room.allowFrom)) return { decision: 'ignored', reason: 'sender not allowed in this room' };
    // Pairing never grants room access, and room access never creates a principal.
    return { decision: 'admitted', principalId: m.principalId, autoLink: false };
  }
  if (p.dmPolicy === 'disabled') {
    return { decision: 'refused', reason: 'direct messages are disabled', notify: 'Direct messages to this assistant are disabled right now.' };
  }
  if (m.authenticated || m.principalId) return { decision: 'admitted', principalId: m.principalId, autoLink: false };
  if (listed(p.allowFrom) || p.dmPolicy === 'open') return { decision: 'admitted', principalId: null, autoLink: true };
  if (p.dmPolicy === 'allowlist') {
    return { decision: 'refused', reason: 'sender not on the allowlist', notify: 'You are not on this assistant’s allowlist. Ask its operator for access.' };
  }
  return { decision: 'pairing' };
}

/**
 * The boundary's per-sender token buckets: {@link RateLimiter} in memory (SQLite: one process),
 * {@link SharedRateLimiter} over the store's shared counters (PostgreSQL: replicas share them).
 */
export interface SenderBuckets {
  /** See {@link RateLimiter.take}. Rejects only on a storage error (shared buckets). */
  take(key: string, limit: BucketLimit, now?: number, opts?: { force?: boolean }): BucketTake | Promise<BucketTake>;
}

/** Per-sender token buckets shared by every gateway on the database ({@link SharedCounters}). */
export class SharedRateLimiter implements SenderBuckets {
  constructor(private readonly counters: SharedCounters) {}

  take(key: string, limit: BucketLimit, now = Date.now(), opts: { force?: boolean } = {}): Promise<BucketTake> {
    return this.counters.take(key, limit, now, opts);
  }
}

/** Per-sender token buckets in memory. */
export class RateLimiter implements SenderBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number; warned: boolean }>();

  /**
   * Takes one token; false when the sender is over the limit. `warn` is true once per empty spell (a spell ends when the bucket has refilled completely).
   * With `force` the token is taken even from an empty bucket (it goes into debt, down to
   * `-burst`): for work already owed to the sender, such as the turn of approved held messages.
   */
  take(key: string, limit: { burst: number; perMinute: number }, now = Date.now(), opts: { force?: boolean } = {}): { ok: boolean; warn: boolean } {
    const b = this.buckets.get(key) ?? { tokens: limit.burst, at: now, warned: false };
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 60_000) * limit.perMinute);
    b.at = now;
    this.buckets.set(key, b);
    if (this.buckets.size > 50_000) this.prune(now, limit);
    if (opts.force) {
      b.tokens = Math.max(-limit.burst, b.tokens - 1);
      return { ok: true, warn: false };
    }
    if (b.tokens >= 1) {
      // The notice is sent again only after the sender was quiet long enough to refill the whole
      // bucket: a steady flood at just over the rate would otherwise earn a notice per refill.
      if (b.tokens >= limit.burst) b.warned = false;
      b.tokens -= 1;
      return { ok: true, warn: false };
    }
    const warn = !b.warned;
    b.warned = true;
    return { ok: false, warn };
  }

  // Full buckets carry no information: drop them so memory stays bounded.
  private prune(now: number, limit: { burst: number; perMinute: number }): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 60_000) * limit.perMinute >= limit.burst) this.buckets.delete(k);
    }
  }
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** An 8-character pairing code without 0/O/1/I. */
export function pairingCode(random: (n: number) => Uint8Array): string {
  const bytes = random(8);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}
