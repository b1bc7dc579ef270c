import { createHash } from 'node:crypto';
import type { SharedMarks } from '@switchboard/core';

/** The header that names a session: `[A-Za-z0-9_-]{1,64}`, one session per (token, label). */
export const SESSION_HEADER = 'x-switchboard-session';
/** The header that makes a retried request the same request. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

const LABEL = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** A header value as Node gives it (absent, one value, or several for a repeated header). */
export type HeaderValue = string | string[] | undefined;

/** A header read: absent, a valid value, or why it is refused. */
export type HeaderRead = { ok: true; value: string | null } | { ok: false; message: string };

function one(name: string, v: unknown): { ok: true; value: string | null } | { ok: false; message: string } {
  if (v === undefined) return { ok: true, value: null };
  if (typeof v !== 'string') return { ok: false, message: `${name}: send the header once` };
  return { ok: true, value: v };
}

/** Reads `X-Switchboard-Session`: null without it (the person's default session). */
export function readSessionLabel(v: unknown): HeaderRead {
  const r = one('X-Switchboard-Session', v);
  if (!r.ok || r.value === null) return r;
  return LABEL.test(r.value) ? r : { ok: false, message: 'X-Switchboard-Session: expected 1 to 64 letters, digits, "_" or "-"' };
}

/** Reads `Idempotency-Key`: null without it. */
export function readIdempotencyKey(v: unknown): HeaderRead {
  const r = one('Idempotency-Key', v);
  if (!r.ok || r.value === null) return r;
  return KEY.test(r.value) ? r : { ok: false, message: 'Idempotency-Key: expected 1 to 255 printable ASCII characters without spaces' };
}

const sha = (...parts: string[]) =>
  createHash('sha256')
    .update(parts.map((p) => `${p.length}:${p}`).join('|'))
    .digest('hex')
    .slice(0, 40);

/** The inbox dedupe key of a request sent with an `Idempotency-Key` (scoped to the token: one person's key never answers another's request). */
export function idempotentDedupeKey(tokenId: string, idempotencyKey: string): string {
  return `k:${sha(tokenId, idempotencyKey)}`;
}

/** What identifies one request for deduplication. */
export interface RequestIdentity {
  tokenId: string;
  label: string | null;
  agentId: string;
  text: string;
}

/**
 * The inbox dedupe keys of requests. With an `Idempotency-Key` the key is derived from it and the
 * token (so one person's key never answers another's request); without one, the same token,
 * session, agent and message within `windowMs` are one request (remembered in memory: a restart
 * forgets the window, an `Idempotency-Key` does not).
 */
export class RequestKeys {
  private readonly recent = new Map<string, { key: string; expiresAt: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxRemembered = 100_000,
  ) {}

  /** The dedupe key of a request at `now`. */
  keyFor(who: RequestIdentity, idempotencyKey: string | null, now = Date.now()): string {
    if (idempotencyKey !== null) return idempotentDedupeKey(who.tokenId, idempotencyKey);
    const hash = sha(who.tokenId, who.label ?? '', who.agentId, who.text);
    this.prune(now);
    const seen = this.recent.get(hash);
    if (seen && seen.expiresAt > now) return seen.key;
    const key = `h:${hash}:${now.toString(36)}`;
    this.recent.delete(hash);
    this.recent.set(hash, { key, expiresAt: now + this.windowMs });
    while (this.recent.size > this.maxRemembered) this.recent.delete(this.recent.keys().next().value!);
    return key;
  }

  /**
   * {@link keyFor}, with the window shared by replicas when `marks` is given (a gateway on
   * PostgreSQL): the same request sent to another replica within the window gets the same key.
   * The in-memory window answers first; a failed database write falls back to it.
   */
  async sharedKeyFor(who: RequestIdentity, idempotencyKey: string | null, marks: SharedMarks | undefined, scope: string, now = Date.now()): Promise<string> {
    const key = this.keyFor(who, idempotencyKey, now);
    if (idempotencyKey !== null || !marks) return key;
    const hash = sha(who.tokenId, who.label ?? '', who.agentId, who.text);
    const r = await marks.put(`openai:${scope}:${hash}`, key, this.recent.get(hash)?.expiresAt ?? now + this.windowMs).catch(() => null);
    if (!r || r.created || !/^h:[0-9a-f]{40}:[0-9a-z]{1,12}$/.test(r.value)) return key;
    // Another replica saw it first: its key, here too for the rest of the window.
    const mine = this.recent.get(hash);
    if (mine) mine.key = r.value;
    return r.value;
  }

  private prune(now: number): void {
    // Entries are kept in insertion order and share one window, so the expired ones come first.
    for (const [hash, v] of this.recent) {
      if (v.expiresAt > now) break;
      this.recent.delete(hash);
    }
  }
}
