import { toolUses, type AssistantBlock, type AssistantMessage, type Message, type ToolResultBlock, type UserBlock } from '@switchboard/agent';
import { summaryBlock } from '@switchboard/agent';
import { seqOf, viewFromBoundary } from './context/compaction-view.js';
import type { NewEntry } from './storage.js';

/** Payloads of transcript entries, by kind. */
export interface UserPayload {
  /** What the person sent (only their text: displays and hooks read this). */
  content: UserBlock[];
  /**
   * When the turn started (see `turnStamp`), stored with the entry: the model sees it as a text
   * block before `content`. Absent on older entries and on messages steered into a running turn.
   */
  stamp?: string;
}
export interface AssistantPayload {
  content: AssistantBlock[];
  model: string;
}
export interface ToolStartPayload {
  toolUseId: string;
  name: string;
  input: unknown;
  readOnly: boolean;
}
export interface ToolResultPayload {
  result: ToolResultBlock;
  fullContent?: string;
}

export interface Rebuilt {
  /** Messages for the model: alternating roles, every tool_use answered except in `open`. */
  messages: Message[];
  /** Parallel to `messages`: an assistant message's entry seq (where a compaction may cut after it); undefined for user messages and unstored entries. */
  seqs: (number | undefined)[];
  /** When the history ends with an assistant message whose tool calls are not all answered. */
  open: {
    message: AssistantMessage;
    /** Results already stored for some of its calls. */
    results: Map<string, ToolResultBlock>;
    /** Calls recorded as started (tool_start) without a result. */
    started: Map<string, ToolStartPayload>;
  } | null;
}

const INTERRUPTED = 'This tool call was interrupted before it returned a result.';

/**
 * Rebuilds the model's view of a session from its append-only entries. Consecutive user entries
 * merge into one message; tool results go first in the user message after their tool_use; a
 * tool_use left unanswered mid-history gets an is_error result so the API accepts the history.
 * A session with a `compact` boundary starts from it: the summary opens the first user message,
 * followed by the entries after its `throughSeq` (see `viewFromBoundary`).
 */
export function rebuildMessages(all: readonly NewEntry[]): Rebuilt {
  const view = viewFromBoundary(all);
  const entries = view.entries;
  const messages: Message[] = [];
  const seqs: (number | undefined)[] = [];
  let pendingUses: string[] = [];
  let results = new Map<string, ToolResultBlock>();
  let started = new Map<string, ToolStartPayload>();
  let pendingText: UserBlock[] = view.summary !== null ? [summaryBlock(view.summary)] : [];

  const flushUser = () => {
    if (pendingUses.length === 0 && pendingText.length === 0) return;
    const blocks: UserBlock[] = pendingUses.map((id) => results.get(id) ?? { type: 'tool_result', tool_use_id: id, content: INTERRUPTED, is_error: true });
    blocks.push(...pendingText);
    const last = messages.at(-1);
    if (last?.role === 'user') last.content.push(...blocks);
    else {
      messages.push({ role: 'user', content: blocks });
      seqs.push(undefined);
    }
    pendingUses = [];
    results = new Map();
    started = new Map();
    pendingText = [];
  };

  for (const e of entries) {
    switch (e.kind) {
      case 'user': {
        const p = e.payload as UserPayload;
        if (typeof p.stamp === 'string' && p.stamp.length > 0) pendingText.push({ type: 'text', text: p.stamp });
        pendingText.push(...p.content);
        break;
      }
      case 'tool_start': {
        const p = e.payload as ToolStartPayload;
        started.set(p.toolUseId, p);
        break;
      }
      case 'tool_result': {
        const p = e.payload as ToolResultPayload;
        if (pendingUses.includes(p.result.tool_use_id)) results.set(p.result.tool_use_id, p.result);
        break;
      }
      case 'assistant': {
        const p = e.payload as AssistantPayload;
        const content = p.content.filter((b) => b.type !== 'text' || b.text.length > 0);
        if (content.length === 0) break;
        flushUser();
        if (messages.length === 0) break; // history must open with a user message
        const message: AssistantMessage = { role: 'assistant', content };
        messages.push(message);
        seqs.push(seqOf(e));
        pendingUses = toolUses(message).map((u) => u.id);
        break;
      }
      default:
        break;
    }
  }
  const last = messages.at(-1);
  if (last?.role === 'assistant' && pendingUses.length > 0 && pendingText.length === 0) {
    const complete = pendingUses.every((id) => results.has(id));
    if (!complete) return { messages, seqs, open: { message: last, results, started } };
  }
  flushUser();
  return { messages, seqs, open: null };
}

/** Everything the assistant said in one turn, from its entries (stored, or about to be). */
export function turnText(entries: readonly NewEntry[], turnId: string): string {
  return entries
    .filter((e) => e.turnId === turnId && e.kind === 'assistant')
    .map((e) =>
      (e.payload as AssistantPayload).content
        .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
        .map((b) => b.text)
        .join(''),
    )
    .filter((t) => t.length > 0)
    .join('\n\n');
}
