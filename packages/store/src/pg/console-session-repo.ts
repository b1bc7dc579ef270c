import type { Sql } from './db.js';

// The console's sign-in sessions on PostgreSQL (issue 20): a session opened through one replica
// is valid on every replica. Keyed by the sha256 of the cookie (never the cookie itself).

/** One stored console session. */
export interface SharedConsoleSession {
  /** sha256 of the cookie value. */
  hash: string;
  /** The signed-in identity as JSON (the gateway validates it when it reads it back). */
  identity: string;
  tokenId: string;
  csrfToken: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** The console sessions replicas share. */
export interface SharedConsoleSessions {
  /** Stores a session; the token's oldest beyond `maxPerToken` and every ended session are deleted. */
  put(session: SharedConsoleSession, maxPerToken: number, now: number): Promise<void>;
  /** The session of `hash` when it has not ended at `now`; null otherwise. */
  get(hash: string, now: number): Promise<SharedConsoleSession | null>;
  /** Deletes a session (signed out, its token revoked): it is gone on every replica. */
  delete(hash: string): Promise<void>;
}

interface Row {
  hash: string;
  identity: string;
  token_id: string;
  csrf_token: string;
  expires_at: number;
}

/** {@link SharedConsoleSessions} on PostgreSQL (table `console_sessions`). */
export function pgConsoleSessions(db: Sql): SharedConsoleSessions {
  return {
    async put(s, maxPerToken, now) {
      await db.run('DELETE FROM console_sessions WHERE expires_at <= $1', [now]);
      await db.run('INSERT INTO console_sessions (hash, identity, token_id, csrf_token, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        s.hash,
        s.identity,
        s.tokenId,
        s.csrfToken,
        Math.floor(s.expiresAt),
        now,
      ]);
      await db.run(
        `DELETE FROM console_sessions WHERE token_id = $1 AND hash NOT IN
           (SELECT hash FROM console_sessions WHERE token_id = $1 ORDER BY created_at DESC, hash LIMIT $2)`,
        [s.tokenId, Math.max(1, Math.floor(maxPerToken))],
      );
    },
    async get(hash, now) {
      const r = await db.row<Row>('SELECT hash, identity, token_id, csrf_token, expires_at FROM console_sessions WHERE hash = $1 AND expires_at > $2', [
        hash,
        now,
      ]);
      return r ? { hash: r.hash, identity: r.identity, tokenId: r.token_id, csrfToken: r.csrf_token, expiresAt: r.expires_at } : null;
    },
    async delete(hash) {
      await db.run('DELETE FROM console_sessions WHERE hash = $1', [hash]);
    },
  };
}
