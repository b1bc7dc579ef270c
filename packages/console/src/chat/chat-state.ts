import { type ChatFrame, entryText, entryToolName, type TranscriptEntry } from './chat-frames';

/** One line of the conversation as the page shows it. */
export interface ChatItem {
  /** Stable across updates: `u:<clientId|seq>`, `a:<turnId>`, `t:<toolUseId>`, `p:<approvalId>`, `s:<n>`. */
  key: string;
  role: 'user' | 'assistant' | 'tool' | 'approval' | 'system' | 'error';
  text: string;
  turnId: string | null;
  /** An assistant answer still streaming. */
  streaming?: boolean;
  /** Approvals only. */
  approval?: {
    id: string;
    tool: string;
    state: 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled';
    by: string | null;
    choices: string[] | null;
    note: string | null;
  };
}

/** The chat page's state: the lines, the highest final cursor seen, and whether the history needs a refetch. */
export interface ChatState {
  items: ChatItem[];
  cursor: number;
  /** A final arrived for a turn the page does not know (another tab, or a missed stretch): refetch the transcript. */
  stale: boolean;
  seq: number;
}

/** An empty chat. */
export const emptyChat = (): ChatState => ({ items: [], cursor: 0, stale: false, seq: 0 });

const upsert = (items: ChatItem[], item: ChatItem, after?: (i: ChatItem) => boolean): ChatItem[] => {
  const at = items.findIndex((i) => i.key === item.key);
  if (at >= 0) return items.map((i, n) => (n === at ? item : i));
  if (after) {
    // Keep a turn's lines together: a tool line goes before the turn's answer, once it exists.
    const answer = items.findIndex(after);
    if (answer >= 0) return [...items.slice(0, answer), item, ...items.slice(answer)];
  }
  return [...items, item];
};

/** The lines of a transcript (user and assistant text, tool calls, compaction boundaries). */
export function transcriptItems(entries: TranscriptEntry[]): ChatItem[] {
  const items: ChatItem[] = [];
  for (const e of entries) {
    if (e.kind === 'user') {
      const text = entryText(e.payload);
      if (text !== '') items.push({ key: `u:h${e.seq}`, role: 'user', text, turnId: e.turnId });
    } else if (e.kind === 'assistant') {
      const text = entryText(e.payload);
      if (text === '') continue;
      const key = `a:${e.turnId ?? `h${e.seq}`}`;
      const prev = items.find((i) => i.key === key);
      // A turn with tool calls has several assistant messages: the page shows them as one answer.
      if (prev) prev.text = `${prev.text}\n\n${text}`;
      else items.push({ key, role: 'assistant', text, turnId: e.turnId });
    } else if (e.kind === 'tool_start') {
      const name = entryToolName(e.payload) ?? 'tool';
      items.push({ key: `t:h${e.seq}`, role: 'tool', text: `Used ${name}`, turnId: e.turnId });
    } else if (e.kind === 'compact') {
      items.push({ key: `s:h${e.seq}`, role: 'system', text: 'Earlier conversation compacted into a summary.', turnId: null });
    }
  }
  return items;
}

/** Replaces the history with a transcript, keeping the live lines of turns the transcript does not have yet. */
export function withTranscript(state: ChatState, entries: TranscriptEntry[]): ChatState {
  const history = transcriptItems(entries);
  const known = new Set(history.map((i) => i.turnId).filter((t): t is string => t !== null));
  // Kept: page notes, approvals, and lines of turns the transcript does not have yet (a send not yet accepted, a running turn).
  const live = state.items.filter((i) => i.key.startsWith('s:') || i.key.startsWith('p:') || i.turnId === null || !known.has(i.turnId));
  return { ...state, items: [...history, ...live], stale: false };
}

/** The member sent `text` as `clientId`. */
export function sent(state: ChatState, clientId: string, text: string): ChatState {
  return { ...state, items: upsert(state.items, { key: `u:${clientId}`, role: 'user', text, turnId: null }) };
}

/** A line of the page's own (a command's answer, a connection note). */
export function note(state: ChatState, text: string, role: 'system' | 'error' = 'system'): ChatState {
  const seq = state.seq + 1;
  return { ...state, seq, items: [...state.items, { key: `s:${seq}`, role, text, turnId: null }] };
}

const knowsTurn = (state: ChatState, turnId: string) => state.items.some((i) => i.turnId === turnId);

/** Applies one server frame. */
export function applyFrame(state: ChatState, f: ChatFrame): ChatState {
  switch (f.type) {
    case 'hello_ok':
      return state;
    case 'accepted': {
      const key = `u:${f.clientId}`;
      if (!state.items.some((i) => i.key === key)) return state;
      // The transcript (read meanwhile) may hold this message already: then its line is the one kept.
      if (f.turnId !== null && state.items.some((i) => i.role === 'user' && i.key !== key && i.turnId === f.turnId)) {
        return { ...state, items: state.items.filter((i) => i.key !== key) };
      }
      return { ...state, items: state.items.map((i) => (i.key === key ? { ...i, turnId: f.turnId } : i)) };
    }
    case 'session_reset':
      return note({ ...state, items: [] }, 'New conversation started.');
    case 'delta': {
      const key = `a:${f.turnId}`;
      const prev = state.items.find((i) => i.key === key);
      const item: ChatItem = { key, role: 'assistant', turnId: f.turnId, text: `${prev?.streaming ? prev.text : ''}${f.text}`, streaming: true };
      return { ...state, items: upsert(state.items, item) };
    }
    case 'attempt_reset': {
      const key = `a:${f.turnId}`;
      return { ...state, items: state.items.map((i) => (i.key === key ? { ...i, text: '', streaming: true } : i)) };
    }
    case 'tool': {
      const text =
        f.phase === 'start'
          ? `Running ${f.name}…`
          : f.phase === 'progress'
            ? `${f.name}: ${f.message ?? 'working…'}`
            : f.isError
              ? `${f.name} failed`
              : `${f.name} done`;
      const item: ChatItem = { key: `t:${f.toolUseId}`, role: 'tool', text, turnId: f.turnId };
      return { ...state, items: upsert(state.items, item, (i) => i.key === `a:${f.turnId}` && i.streaming !== true) };
    }
    case 'final': {
      const cursor = Math.max(state.cursor, f.cursor);
      if (f.reason === 'steered' && f.text === '') return { ...state, cursor };
      const key = `a:${f.turnId}`;
      const known = knowsTurn(state, f.turnId) || (f.clientId !== null && state.items.some((i) => i.key === `u:${f.clientId}`));
      if (!known) return { ...state, cursor, stale: true };
      const items = upsert(state.items, { key, role: 'assistant', turnId: f.turnId, text: f.text, streaming: false });
      // A user line sent from this page learns its turn here too, if `accepted` was missed in a reconnect.
      const linked = f.clientId === null ? items : items.map((i) => (i.key === `u:${f.clientId}` && i.turnId === null ? { ...i, turnId: f.turnId } : i));
      return { ...state, cursor, items: linked };
    }
    case 'error': {
      const cursor = f.cursor === null ? state.cursor : Math.max(state.cursor, f.cursor);
      const items = f.turnId === null ? state.items : state.items.map((i) => (i.key === `a:${f.turnId}` ? { ...i, streaming: false } : i));
      return note({ ...state, cursor, items }, `${f.message} (${f.code})`, 'error');
    }
    case 'approval_request': {
      const key = `p:${f.approvalId}`;
      if (state.items.some((i) => i.key === key)) return state;
      const item: ChatItem = {
        key,
        role: 'approval',
        text: f.summary,
        turnId: f.turnId,
        approval: { id: f.approvalId, tool: f.tool, state: 'pending', by: null, choices: f.choices, note: null },
      };
      return { ...state, items: [...state.items, item] };
    }
    case 'approval_resolved':
      return decide(state, f.approvalId, f.allowed ? 'allowed' : 'denied', f.by, null);
    case 'approval_result': {
      const st = f.status === 'allowed' || f.status === 'denied' || f.status === 'expired' || f.status === 'cancelled' ? f.status : null;
      if (f.outcome === 'decided' || f.outcome === 'already_decided') return decide(state, f.approvalId, st, null, null);
      return decide(state, f.approvalId, null, null, f.reason ?? `Not decided (${f.outcome}).`);
    }
    case 'notice':
      return note(state, f.text);
    case 'command':
      return note(state, commandText(f.name, f.outcome, f.body));
  }
}

function decide(state: ChatState, approvalId: string, st: NonNullable<ChatItem['approval']>['state'] | null, by: string | null, why: string | null): ChatState {
  return {
    ...state,
    items: state.items.map((i) =>
      i.key === `p:${approvalId}` && i.approval
        ? { ...i, approval: { ...i.approval, state: st ?? i.approval.state, by: by ?? i.approval.by, note: why ?? i.approval.note } }
        : i,
    ),
  };
}

const num = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? v.toLocaleString('en') : '?');

/** A command's answer as one line of plain text. */
export function commandText(name: string, outcome: string, body: Record<string, unknown>): string {
  if (name === 'usage' || name === 'compacted') {
    if (name === 'compacted') {
      if (outcome === 'compacted') return `Compacted: about ${num(body.tokensBefore)} → ${num(body.tokensAfter)} tokens.`;
      return `Not compacted: ${typeof body.reason === 'string' ? body.reason : outcome}.`;
    }
    const usage = body.usage as { periods?: unknown } | undefined;
    const periods = Array.isArray(usage?.periods) ? usage.periods : [];
    const lines = periods
      .filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null)
      .map((p) => {
        const limit = p.limit as { tokens?: unknown; usd?: unknown } | undefined;
        const of = limit ? ` of ${limit.tokens !== undefined ? `${num(limit.tokens)} tokens` : `$${num(limit.usd)}`}` : '';
        return `${p.period === 'day' ? 'Today' : p.period === 'month' ? 'This month' : String(p.period)}: ${num(p.tokens)} tokens, $${typeof p.usd === 'number' ? p.usd.toFixed(4) : '?'}${of}`;
      });
    return lines.length > 0 ? `Usage — ${lines.join('; ')}` : `Usage: ${outcome}`;
  }
  if (name === 'context' && typeof body.report === 'object' && body.report !== null) {
    const r = body.report as Record<string, unknown>;
    return `Context: ${num(r.tokens)} of ${num(r.window)} tokens (${num(r.messages)} messages).`;
  }
  if (name === 'mode' && outcome === 'set' && typeof body.mode === 'string') return `Permission mode: ${body.mode}.`;
  if (name === 'mode' && outcome === 'usage' && Array.isArray(body.modes)) return `Permission mode: ${String(body.current)} (modes: ${body.modes.join(', ')}).`;
  if (name === 'queue' && typeof body.mode === 'string') return `Queue mode: ${body.mode}.`;
  // Any other answer: its plain fields (and those one level down), never markup.
  const facts: string[] = [];
  const add = (prefix: string, o: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(o)) {
      if (['type', 'command', 'outcome'].includes(k) || facts.length >= 12) continue;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') facts.push(`${prefix}${k}: ${String(v).slice(0, 200)}`);
      else if (prefix === '' && typeof v === 'object' && v !== null && !Array.isArray(v)) add(`${k}.`, v as Record<string, unknown>);
    }
  };
  add('', body);
  return `/${name}: ${outcome}${facts.length > 0 ? ` — ${facts.join(', ')}` : ''}`;
}
