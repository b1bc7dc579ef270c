/**
 * The web chat's reading of the gateway's WebSocket frames and transcript entries (see
 * docs/protocol.md). Both come from outside the page, so each is checked field by field: a frame
 * that does not fit is dropped (`null`), never half-read.
 */

/** A server frame the chat acts on. */
export type ChatFrame =
  | { type: 'hello_ok'; principalId: string; cursor: number }
  | { type: 'accepted'; clientId: string; turnId: string | null; duplicate: boolean }
  | { type: 'session_reset' }
  | { type: 'delta'; turnId: string; clientId: string | null; text: string }
  | { type: 'attempt_reset'; turnId: string }
  | { type: 'tool'; turnId: string; phase: 'start' | 'end' | 'progress'; name: string; toolUseId: string; isError: boolean; message: string | null }
  | { type: 'final'; turnId: string; clientId: string | null; text: string; reason: string; cursor: number }
  | { type: 'error'; code: string; message: string; turnId: string | null; clientId: string | null; cursor: number | null }
  | { type: 'approval_request'; approvalId: string; turnId: string; tool: string; summary: string; choices: string[] | null }
  | { type: 'approval_resolved'; approvalId: string; allowed: boolean; by: string }
  | { type: 'approval_result'; approvalId: string; outcome: string; status: string | null; reason: string | null }
  | { type: 'notice'; text: string }
  | { type: 'command'; name: string; outcome: string; body: Record<string, unknown> };

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max = 1_000_000): v is string => typeof v === 'string' && v.length <= max;
const id = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 128;
const cursor = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const optId = (v: unknown): string | null | undefined => (v === undefined || v === null ? null : id(v) ? v : undefined);

/** Reads one text frame of the socket; `null` for anything that is not a frame the chat knows, whole. */
export function parseFrame(raw: string): ChatFrame | null {
  let f: unknown;
  try {
    f = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRec(f) || typeof f.type !== 'string') return null;
  switch (f.type) {
    case 'hello_ok':
      return id(f.principalId) && cursor(f.cursor) ? { type: 'hello_ok', principalId: f.principalId, cursor: f.cursor } : null;
    case 'accepted': {
      const turnId = optId(f.turnId);
      return id(f.clientId) && turnId !== undefined ? { type: 'accepted', clientId: f.clientId, turnId, duplicate: f.duplicate === true } : null;
    }
    case 'session_reset':
      return { type: 'session_reset' };
    case 'delta': {
      const clientId = optId(f.clientId);
      return id(f.turnId) && str(f.text) && clientId !== undefined ? { type: 'delta', turnId: f.turnId, clientId, text: f.text } : null;
    }
    case 'attempt_reset':
      return id(f.turnId) ? { type: 'attempt_reset', turnId: f.turnId } : null;
    case 'tool':
      if (!id(f.turnId) || !str(f.name, 200) || !id(f.toolUseId)) return null;
      if (f.phase !== 'start' && f.phase !== 'end' && f.phase !== 'progress') return null;
      return {
        type: 'tool',
        turnId: f.turnId,
        phase: f.phase,
        name: f.name,
        toolUseId: f.toolUseId,
        isError: f.isError === true,
        message: str(f.message, 2000) ? f.message : null,
      };
    case 'final': {
      const clientId = optId(f.clientId);
      if (!id(f.turnId) || !str(f.text) || !cursor(f.cursor) || clientId === undefined) return null;
      return { type: 'final', turnId: f.turnId, clientId, text: f.text, reason: str(f.reason, 64) ? f.reason : 'completed', cursor: f.cursor };
    }
    case 'error': {
      if (!str(f.code, 64) || !str(f.message, 4000)) return null;
      const turnId = optId(f.turnId);
      const clientId = optId(f.clientId);
      if (turnId === undefined || clientId === undefined) return null;
      return { type: 'error', code: f.code, message: f.message, turnId, clientId, cursor: cursor(f.cursor) ? f.cursor : null };
    }
    case 'approval_request': {
      if (!id(f.approvalId) || !id(f.turnId) || !str(f.tool, 200) || !str(f.summary, 100_000)) return null;
      const choices = Array.isArray(f.choices) && f.choices.every((c) => str(c, 32)) ? (f.choices as string[]) : null;
      return { type: 'approval_request', approvalId: f.approvalId, turnId: f.turnId, tool: f.tool, summary: f.summary, choices };
    }
    case 'approval_resolved':
      return id(f.approvalId) && typeof f.allowed === 'boolean' && str(f.by, 200)
        ? { type: 'approval_resolved', approvalId: f.approvalId, allowed: f.allowed, by: f.by }
        : null;
    case 'approval_result':
      return id(f.approvalId) && str(f.outcome, 64)
        ? {
            type: 'approval_result',
            approvalId: f.approvalId,
            outcome: f.outcome,
            status: str(f.status, 64) ? f.status : null,
            reason: str(f.reason, 4000) ? f.reason : null,
          }
        : null;
    case 'mode_ok':
      return str(f.mode, 32) ? { type: 'command', name: 'mode', outcome: 'set', body: { mode: f.mode } } : null;
    case 'queue_ok':
      return str(f.mode, 32) ? { type: 'command', name: 'queue', outcome: 'set', body: { mode: f.mode } } : null;
    case 'notice':
      return str(f.text, 100_000) ? { type: 'notice', text: f.text } : null;
    case 'usage':
    case 'compacted':
    case 'context':
    case 'command_result': {
      if (!str(f.outcome, 64)) return null;
      const name = f.type === 'command_result' ? (str(f.command, 64) ? f.command : 'command') : f.type;
      return { type: 'command', name, outcome: f.outcome, body: f };
    }
    default:
      return null;
  }
}

/** A transcript entry as `GET /api/v1/me/sessions/{id}/transcript` answers it. */
export interface TranscriptEntry {
  seq: number;
  kind: string;
  turnId: string | null;
  payload: unknown;
}

/** The entries of a transcript answer; entries that do not fit are left out. */
export function parseTranscript(body: unknown): TranscriptEntry[] {
  if (!isRec(body) || !Array.isArray(body.entries)) return [];
  const out: TranscriptEntry[] = [];
  for (const e of body.entries) {
    if (!isRec(e) || !cursor(e.seq) || !str(e.kind, 32)) continue;
    const turnId = optId(e.turnId);
    if (turnId === undefined) continue;
    out.push({ seq: e.seq, kind: e.kind, turnId, payload: e.payload });
  }
  return out;
}

/** The text blocks of an entry's `payload.content` (a string, or blocks of which `text` ones count). */
export function entryText(payload: unknown): string {
  if (!isRec(payload)) return '';
  const c = payload.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .filter((b): b is Rec => isRec(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

/** The tool name of a `tool_start` entry, if it has one. */
export function entryToolName(payload: unknown): string | null {
  return isRec(payload) && str(payload.name, 200) && payload.name !== '' ? payload.name : null;
}

/** A session of `GET /api/v1/me/sessions`, as far as the chat needs it. */
export interface MeSession {
  id: string;
  channel: string;
  account: string;
  endedAt: string | null;
  updatedAt: string;
}

/** The member's current web chat session: the newest open one on the `default` WebSocket account. */
export function currentChatSession(body: unknown): MeSession | null {
  if (!isRec(body) || !Array.isArray(body.sessions)) return null;
  const open = body.sessions.filter(
    (s): s is MeSession =>
      isRec(s) && id(s.id) && s.channel === 'websocket' && s.account === 'default' && (s.endedAt === null || s.endedAt === undefined) && str(s.updatedAt, 64),
  );
  open.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  return open[0] ?? null;
}
