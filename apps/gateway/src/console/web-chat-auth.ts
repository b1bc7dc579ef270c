import type { IncomingMessage } from 'node:http';
import type { ConsoleUpgradeCheck } from '@switchboard/core';
import { readSessionCookie } from './cookies.js';
import type { ConsoleAuth } from './request-auth.js';

/** The WebSocket account the web chat connects to (`/ws`). */
export const WEB_CHAT_CHANNEL = 'websocket:default';

/** An `Origin` header as an origin, or null when it is not a URL. */
function originOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/**
 * A web chat upgrade's console session: only a cookie sent from `console.publicOrigin` counts (a
 * page elsewhere, even one `allowedOrigins` lets connect, gets nothing from it and must say `hello`
 * with a token). A member's live session authenticates the socket as them; an ended session is a
 * 401, an operator's session a 403 (operators do not chat as anyone).
 */
export async function webChatSession(auth: ConsoleAuth, req: IncomingMessage): Promise<ConsoleUpgradeCheck> {
  const cookie = readSessionCookie(req.headers.cookie);
  if (cookie === null) return null;
  const origin = originOf(req.headers.origin);
  if (origin === null || origin !== auth.publicOrigin()) return null;
  const resolved = await auth.sessions.resolve(cookie);
  if (!resolved) return { refused: { status: 401, code: 'unauthorized', message: 'The console session has ended; sign in again.' } };
  const s = resolved.session;
  if (s.kind !== 'client') {
    return { refused: { status: 403, code: 'forbidden', message: 'The web chat is for members: sign in with a client token.' } };
  }
  return { principalId: s.principalId, tokenId: s.tokenId, sessionId: s.hash };
}
