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

/**
 * Looks a presented secret up by its hash. The lookup is by a digest of the secret, so timing
 * reveals nothing about stored secrets; the kind is checked after.
 */
export async function verifySecret(storage: Storage, secret: string, kind: TokenKind): Promise<TokenRecord | null> {
  if (secret.length < 10 || secret.length > 200) return null;
  const rec = await storage.tokens.byHash(hashSecret(secret));
  if (!rec || rec.revokedAt || rec.kind !== kind) return null;
  return rec;
}

/** Creates a token and returns its secret (shown once). */
export async function createToken(
  storage: Storage,
  t: { kind: TokenKind; name: string; principalId: string | null; scopes: Scope[] },
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
