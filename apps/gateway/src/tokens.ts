import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Scope, Storage, TokenKind, TokenRecord } from '@switchboard/core';

/** sha256 hex of a secret: what the database stores. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new random secret (32 bytes) with a prefix naming its kind. */
export function newSecret(kind: TokenKind): string {
  return `swb_${kind === 'client' ? 'c' : 'o'}_${randomBytes(32).toString('base64url')}`;
}

/** Constant-time equality of two strings of any length (hash both, compare the digests). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** `lastUsedAt` is written at most this often per token (the check is in the UPDATE itself). */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

/**
 * Looks a presented secret up by its hash. The lookup is by a digest of the secret, so timing
 * reveals nothing about stored secrets; the kind, revocation and expiry are checked after. An
 * accepted token's `lastUsedAt` is recorded at most once a minute.
 */
export async function verifySecret(storage: Storage, secret: string, kind: TokenKind): Promise<TokenRecord | null> {
  if (secret.length < 10 || secret.length > 200) return null;
  const rec = await storage.tokens.byHash(hashSecret(secret));
  if (!rec || rec.revokedAt || rec.kind !== kind) return null;
  const now = new Date();
  if (rec.expiresAt && rec.expiresAt.getTime() <= now.getTime()) return null;
  if (!rec.lastUsedAt || now.getTime() - rec.lastUsedAt.getTime() >= TOKEN_TOUCH_INTERVAL_MS) {
    if (await storage.tokens.touch(rec.id, now, TOKEN_TOUCH_INTERVAL_MS)) return { ...rec, lastUsedAt: now };
  }
  return rec;
}

/**
 * The live tokens minted by `id`, directly or through tokens it minted (operator tokens can mint
 * operator tokens), in creation order. For `revoke --cascade`.
 */
export function mintedBy(all: readonly TokenRecord[], id: string): TokenRecord[] {
  const out: TokenRecord[] = [];
  const seen = new Set<string>([id]);
  const queue = [id];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const t of all) {
      if (t.createdBy === parent && !seen.has(t.id)) {
        seen.add(t.id);
        queue.push(t.id);
        if (!t.revokedAt) out.push(t);
      }
    }
  }
  return out;
}

/** Creates a token and returns its secret (shown once). */
export async function createToken(
  storage: Storage,
  t: { kind: TokenKind; name: string; principalId: string | null; scopes: Scope[]; expiresAt?: Date | null; createdBy?: string | null },
): Promise<{ secret: string; record: TokenRecord }> {
  const secret = newSecret(t.kind);
  const record = await storage.tokens.create({ ...t, secretHash: hashSecret(secret) });
  return { secret, record };
}

/** Reads a bearer token from an Authorization header value. */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
