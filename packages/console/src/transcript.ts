/**
 * A transcript entry as the console shows it: plain strings only (the page renders them as
 * text, so `<script>` in a message stays text). Payload shapes: docs/storage.md.
 */
import { truncate } from './format';
import type { TranscriptEntry } from './types';

/** How many characters of a tool result the transcript shows. */
export const RESULT_PREVIEW = 1500;

/** A subagent's transcript linked from an assistant entry (`task` calls). */
export interface SidechainLink {
  toolUseId: string;
  type: string;
  description: string;
  state: string;
}

/** One part of an entry: a paragraph of text, a tool call, or a tool result. */
export type Part =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: string }
  | { type: 'tool_result'; toolUseId: string; text: string; isError: boolean; cut: boolean; fullLength: number | null }
  | { type: 'other'; text: string };

/** What the transcript view shows of an entry. */
export interface EntryView {
  seq: number;
  kind: string;
  label: string;
  parts: Part[];
  /** Tool use ids this entry refers to (its calls, or the call it starts or answers). */
  toolUseIds: string[];
  /** A compaction boundary or a microcompact cut: drawn across the transcript. */
  boundary: boolean;
  model: string | null;
  sidechains: SidechainLink[];
  createdAt: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function json(v: unknown): string {
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The text of a tool_result block's content (a string, or text blocks). */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((b) => (isRecord(b) && b.type === 'text' ? str(b.text) : isRecord(b) ? `[${str(b.type) || 'block'}]` : '')).join('\n');
  }
  return content === undefined ? '' : json(content);
}

function blocksOf(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return content === undefined ? [] : [{ type: 'other', text: json(content) }];
  return content.map((b): Part => {
    if (!isRecord(b)) return { type: 'other', text: json(b) };
    if (b.type === 'text') return { type: 'text', text: str(b.text) };
    if (b.type === 'tool_use') return { type: 'tool_use', id: str(b.id), name: str(b.name), input: json(b.input) };
    if (b.type === 'tool_result') return toolResultPart(b, undefined);
    if (b.type === 'thinking') return { type: 'other', text: '(thinking)' };
    return { type: 'other', text: `[${str(b.type) || 'block'}]` };
  });
}

function toolResultPart(block: Record<string, unknown>, fullContent: unknown): Part {
  const text = resultText(block.content);
  const full = fullContent === undefined ? null : resultText(fullContent).length;
  return {
    type: 'tool_result',
    toolUseId: str(block.tool_use_id),
    text: truncate(text, RESULT_PREVIEW),
    isError: block.is_error === true,
    cut: full !== null || text.length > RESULT_PREVIEW,
    fullLength: full,
  };
}

function sidechainsOf(v: unknown): SidechainLink[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isRecord).map((s) => ({ toolUseId: str(s.toolUseId), type: str(s.type), description: str(s.description), state: str(s.state) }));
}

/** The view of one transcript entry; an unknown kind or a payload of the wrong shape shows as JSON text. */
export function viewEntry(entry: TranscriptEntry & { sidechains?: unknown }): EntryView {
  const p = isRecord(entry.payload) ? entry.payload : {};
  const base: EntryView = {
    seq: entry.seq,
    kind: entry.kind,
    label: entry.kind,
    parts: [],
    toolUseIds: [],
    boundary: false,
    model: null,
    sidechains: sidechainsOf(entry.sidechains ?? p.sidechains),
    createdAt: entry.createdAt,
  };
  switch (entry.kind) {
    case 'user':
      return { ...base, label: 'Person', parts: blocksOf(p.content) };
    case 'assistant': {
      const parts = blocksOf(p.content);
      return {
        ...base,
        label: 'Assistant',
        parts,
        model: str(p.model) || null,
        toolUseIds: parts.flatMap((x) => (x.type === 'tool_use' ? [x.id] : [])),
      };
    }
    case 'tool_start':
      // The call's input is shown with the assistant message that made it; this entry marks when it ran.
      return {
        ...base,
        label: `Tool started: ${str(p.name)} · ${str(p.toolUseId)}${p.readOnly === true ? ' (read-only)' : ''}`,
        toolUseIds: [str(p.toolUseId)],
      };
    case 'tool_result': {
      const part = isRecord(p.result) ? toolResultPart(p.result, p.fullContent) : ({ type: 'other', text: json(entry.payload) } as Part);
      return { ...base, label: 'Tool result', parts: [part], toolUseIds: part.type === 'tool_result' ? [part.toolUseId] : [] };
    }
    case 'compact':
      return {
        ...base,
        label: `Compaction boundary (${str(p.trigger) || 'unknown'}): through entry ${String(p.throughSeq ?? '?')}, ${String(p.tokensBefore ?? '?')} → ${String(p.tokensAfter ?? '?')} tokens`,
        parts: [{ type: 'text', text: str(p.summary) }],
        boundary: true,
        model: str(p.model) || null,
      };
    case 'microcompact': {
      const cleared = Array.isArray(p.cleared) ? p.cleared.map(str) : [];
      return {
        ...base,
        label: `Microcompact: ${cleared.length} tool result${cleared.length === 1 ? '' : 's'} cleared, ${String(p.tokensBefore ?? '?')} → ${String(p.tokensAfter ?? '?')} tokens`,
        boundary: true,
        toolUseIds: cleared,
      };
    }
    case 'note':
      return { ...base, label: 'Note', parts: [{ type: 'text', text: typeof p.text === 'string' ? p.text : json(entry.payload) }] };
    default:
      return { ...base, parts: [{ type: 'other', text: json(entry.payload) }] };
  }
}

/** A sidechain's messages (Anthropic message shape) as parts, one list per message. */
export function sidechainMessages(messages: unknown): Array<{ role: string; parts: Part[] }> {
  if (!Array.isArray(messages)) return [];
  return messages.filter(isRecord).map((m) => ({ role: str(m.role) || 'message', parts: blocksOf(m.content) }));
}
