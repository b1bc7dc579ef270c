import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { SESSION_COOKIE } from './console-sessions.js';

/**
 * The session cookie's value in a `Cookie` header, or null when there is none or more than one
 * (a second `swb_session` can only come from a cookie planted for a parent domain: never guess).
 */
export function readSessionCookie(header: string | undefined): string | null {
  if (!header || header.length > 16_384) return null;
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) values.push(part.slice(eq + 1).trim());
  }
  if (values.length !== 1) return null;
  const v = values[0]!;
  return /^[A-Za-z0-9_-]{20,200}$/.test(v) ? v : null;
}

/** Whether a request reached the gateway over TLS, or the console's public origin is `https:` (TLS ends at a proxy in front). */
export function cameOverTls(req: IncomingMessage, publicOrigin: string | undefined): boolean {
  return (req.socket as Partial<TLSSocket>).encrypted === true || (publicOrigin?.startsWith('https:') ?? false);
}

/** The `Set-Cookie` value that opens a session: `HttpOnly; SameSite=Strict; Path=/` (+ `Secure` over TLS). */
export function sessionCookie(value: string, maxAgeSec: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Max-Age=${Math.max(1, Math.floor(maxAgeSec))}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The `Set-Cookie` value that removes the session cookie. */
export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
