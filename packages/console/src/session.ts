import { type ApiClient, ApiError } from './api';

/** A console session as `GET /api/v1/auth/session` answers it. */
export interface ConsoleSession {
  kind: 'operator' | 'client';
  name: string;
  scopes: string[];
  principalId?: string;
  role?: string;
  csrfToken: string;
  expiresAt: string;
  /** False when the gateway has no WebSocket account to chat on. */
  webChat?: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks an auth answer's shape; throws an `ApiError` naming the field that is wrong. */
export function parseSession(body: unknown): ConsoleSession {
  const bad = (field: string) => new ApiError(200, 'bad_answer', `The gateway's session answer has no valid ${field}.`);
  if (!isRecord(body)) throw bad('body');
  if (body.kind !== 'operator' && body.kind !== 'client') throw bad('kind');
  if (typeof body.name !== 'string') throw bad('name');
  if (typeof body.csrfToken !== 'string' || body.csrfToken === '') throw bad('csrfToken');
  if (typeof body.expiresAt !== 'string') throw bad('expiresAt');
  const scopes = Array.isArray(body.scopes) ? body.scopes.filter((s): s is string => typeof s === 'string') : [];
  return {
    kind: body.kind,
    name: body.name,
    scopes,
    csrfToken: body.csrfToken,
    expiresAt: body.expiresAt,
    ...(typeof body.principalId === 'string' ? { principalId: body.principalId } : {}),
    ...(typeof body.role === 'string' ? { role: body.role } : {}),
    ...(typeof body.webChat === 'boolean' ? { webChat: body.webChat } : {}),
  };
}

/** Whether an operator session holds a scope (`admin` implies every scope). */
export function hasScope(session: ConsoleSession | null, scope: string): boolean {
  if (session?.kind !== 'operator') return false;
  return session.scopes.includes('admin') || session.scopes.includes(scope);
}

/** The current console session, or null when not signed in (401). */
export async function loadSession(api: ApiClient): Promise<ConsoleSession | null> {
  try {
    const s = parseSession(await api.get('/auth/session'));
    api.setCsrfToken(s.csrfToken);
    return s;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/** Signs in with an operator or client token (posted once in the body; never kept by the page). */
export async function signIn(api: ApiClient, token: string): Promise<ConsoleSession> {
  const s = parseSession(await api.post('/auth/session', { token }));
  api.setCsrfToken(s.csrfToken);
  return s;
}

/** Ends the console session on the server and forgets the CSRF token. */
export async function signOut(api: ApiClient): Promise<void> {
  try {
    await api.del('/auth/session');
  } finally {
    api.setCsrfToken(null);
  }
}
