import { randomBytes } from 'node:crypto';
import type { AccessChange, Role, Scope, Storage, TokenRecord } from '@switchboard/core';
import type { SharedConsoleSession, SharedConsoleSessions } from '@switchboard/store';
import { z } from 'zod';
import { hashSecret } from '../tokens.js';

/** The name of the console's session cookie. */
export const SESSION_COOKIE = 'swb_session';

/** Who a console session signed in as: an operator token's scopes, or a client token's principal. */
export type ConsoleIdentity = { kind: 'operator'; name: string; scopes: readonly Scope[] } | { kind: 'client'; name: string; principalId: string; role: Role };

/** A console session: the identity, its token, its CSRF token and when it ends. */
export type ConsoleSession = ConsoleIdentity & {
  /** sha256 of the cookie value (the map key); the value itself is never kept. */
  readonly hash: string;
  readonly tokenId: string;
  readonly csrfToken: string;
  readonly expiresAt: Date;
};

/** A session as {@link ConsoleSessions.resolve} hands it out, with its token as stored now. */
export interface ResolvedSession {
  session: ConsoleSession;
  token: TokenRecord;
}

// Bounds memory: at most this many live sessions (the oldest is ended to make room), and per token.
const MAX_SESSIONS = 10_000;
const MAX_PER_TOKEN = 50;
// setTimeout's longest delay; a longer session is ended when next used after its end.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The console's sessions, in memory: a restart signs everyone out (they sign in again with their
 * token), which is the safe failure. A session is keyed by the sha256 of its cookie, bound to the
 * token it was opened with — a revoked, expired or removed token ends it, checked on every use
 * and pushed by access changes — and ends at its own `expiresAt`.
 *
 * With `shared` (replicas on PostgreSQL) the sessions are rows every replica reads: a session opened
 * through one replica is valid on all, and a sign-out through any ends it everywhere (the row is
 * deleted; the `console_session_ended` access change reaches the other replicas' streams and sockets).
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly endListeners = new Set<(s: ConsoleSession) => void>();

  constructor(
    private readonly opts: {
      storage: Storage;
      ttlMs: number;
      /** The sessions replicas share; absent on a single gateway. */
      shared?: SharedConsoleSessions;
      /** Told when deleting a shared session failed (it still ends here; elsewhere at its expiry). */
      onError?: (err: unknown) => void;
    },
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Opens a session for a verified token; returns the cookie value (shown to the browser only), the
   * session, and `saved`: resolves once every replica can read it (at once on a single gateway);
   * when it rejects the session has been ended.
   */
  open(identity: ConsoleIdentity, token: TokenRecord): { cookie: string; session: ConsoleSession; saved: Promise<void> } {
    this.sweep();
    // One token's sign-ins cannot crowd out everyone else's: its own oldest session goes first.
    const own = [...this.sessions.values()].filter((s) => s.tokenId === token.id);
    if (own.length >= MAX_PER_TOKEN) this.end(own[0]!);
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.values().next().value;
      if (oldest) this.end(oldest);
    }
    const cookie = randomBytes(32).toString('base64url');
    const ttlEnd = this.now() + this.opts.ttlMs;
    // A session never outlives its token.
    const end = token.expiresAt ? Math.min(ttlEnd, token.expiresAt.getTime()) : ttlEnd;
    const session: ConsoleSession = {
      ...identity,
      hash: hashSecret(cookie),
      tokenId: token.id,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(end),
    };
    this.keep(session);
    const shared = this.opts.shared;
    const saved = shared
      ? shared.put(toRow(session), MAX_PER_TOKEN, this.now()).catch((err: unknown) => {
          this.end(session);
          throw err;
        })
      : Promise.resolve();
    return { cookie, session, saved };
  }

  /** Holds a session here; its open sockets and streams end when it does, not at their next use. */
  private keep(session: ConsoleSession): void {
    this.sessions.set(session.hash, session);
    const ms = session.expiresAt.getTime() - this.now();
    if (ms <= MAX_TIMER_MS) {
      const t = setTimeout(() => this.end(session), ms);
      t.unref();
      this.timers.set(session.hash, t);
    }
  }

  /** The session of `hash`: on replicas the shared row decides (ended elsewhere: ended here too). */
  private async lookup(hash: string): Promise<ConsoleSession | undefined> {
    const local = this.sessions.get(hash);
    const shared = this.opts.shared;
    if (!shared) return local;
    const row = await shared.get(hash, this.now());
    if (!row) {
      if (local) this.end(local);
      return undefined;
    }
    if (local) return local;
    const session = fromRow(row);
    if (session) this.keep(session);
    return session ?? undefined;
  }

  /**
   * The live session of a cookie value and its token as stored now, or null (unknown, expired,
   * or its token revoked, expired or without its principal — such a session is ended).
   */
  async resolve(cookie: string): Promise<ResolvedSession | null> {
    if (cookie.length < 20 || cookie.length > 200) return null;
    const session = await this.lookup(hashSecret(cookie));
    if (!session) return null;
    if (session.expiresAt.getTime() <= this.now()) {
      this.end(session);
      return null;
    }
    const token = await this.opts.storage.tokens.get(session.tokenId);
    const dead = !token || token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt.getTime() <= this.now());
    if (dead) {
      this.end(session);
      return null;
    }
    if (session.kind === 'client') {
      const principal = await this.opts.storage.principals.get(session.principalId);
      if (!principal || principal.role !== session.role) {
        this.end(session);
        return null;
      }
    }
    return { session, token };
  }

  /** Ends a session (logout); its live streams are told. */
  end(session: ConsoleSession): void {
    if (!this.sessions.delete(session.hash)) return;
    clearTimeout(this.timers.get(session.hash));
    this.timers.delete(session.hash);
    this.opts.shared?.delete(session.hash).catch((err: unknown) => this.opts.onError?.(err));
    for (const l of this.endListeners) l(session);
  }

  /** Ends the sessions an access change takes authority from. */
  readonly onAccessChange = (change: AccessChange): void => {
    for (const s of [...this.sessions.values()]) {
      const hit =
        ((change.type === 'token_revoked' || change.type === 'token_expired') && s.tokenId === change.tokenId) ||
        ((change.type === 'principal_removed' || change.type === 'principal_demoted') && s.kind === 'client' && s.principalId === change.principalId) ||
        // Ended through another replica (a sign-out there): its streams here end too.
        (change.type === 'console_session_ended' && s.hash === change.sessionId);
      if (hit) this.end(s);
    }
  };

  /** Subscribes to sessions ending (logout, expiry seen, revocation); returns the unsubscribe. */
  onEnd(listener: (s: ConsoleSession) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Live sessions (for tests and diagnostics). */
  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const s of [...this.sessions.values()]) if (s.expiresAt.getTime() <= now) this.end(s);
  }
}

const identitySchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('operator'),
    name: z.string().max(200),
    scopes: z.array(z.enum(['read', 'write', 'admin', 'approvals', 'pairing'])).max(10),
  }),
  z.strictObject({
    kind: z.literal('client'),
    name: z.string().max(200),
    principalId: z.string().min(1).max(200),
    role: z.enum(['owner', 'admin', 'member', 'guest']),
  }),
]);

function toRow(s: ConsoleSession): SharedConsoleSession {
  const identity: ConsoleIdentity =
    s.kind === 'operator' ? { kind: 'operator', name: s.name, scopes: s.scopes } : { kind: 'client', name: s.name, principalId: s.principalId, role: s.role };
  return { hash: s.hash, identity: JSON.stringify(identity), tokenId: s.tokenId, csrfToken: s.csrfToken, expiresAt: s.expiresAt.getTime() };
}

/** A stored session, or null when its identity does not parse (then nobody is signed in with it). */
export function fromRow(row: SharedConsoleSession): ConsoleSession | null {
  let raw: unknown;
  try {
    raw = JSON.parse(row.identity);
  } catch {
    return null;
  }
  const r = identitySchema.safeParse(raw);
  if (!r.success) return null;
  return { ...r.data, hash: row.hash, tokenId: row.tokenId, csrfToken: row.csrfToken, expiresAt: new Date(row.expiresAt) };
}
