import { MAX_MESSAGE_CHARS } from './options.js';

const FENCE = '```';
/** Room kept in each chunk for re-closing and re-opening a code fence split across chunks. */
const FENCE_RESERVE = 8;

function cutPoint(text: string, limit: number): number {
  const window = text.slice(0, limit + 1);
  const floor = Math.floor(limit / 2);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at >= floor) return at;
  }
  // No boundary in the second half: a hard cut, never between the halves of a surrogate pair.
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/**
 * Splits text into chunks of at most `limit` UTF-16 code units (Telegram counts that way),
 * preferring paragraph, then line, then word boundaries. A ``` code block split across chunks
 * is closed at the end of one and reopened at the start of the next, so each chunk formats alone.
 */
export function chunkText(text: string, limit = MAX_MESSAGE_CHARS): string[] {
  const body = limit - FENCE_RESERVE;
  const cap = text.includes(FENCE) ? body : limit;
  const raw: string[] = [];
  let rest = text.replace(/\s+$/, '');
  while (rest.length > cap) {
    const at = cutPoint(rest, cap);
    raw.push(rest.slice(0, at).replace(/\s+$/, ''));
    rest = rest.slice(at).replace(/^\n+/, '').replace(/^ /, '');
  }
  if (rest.length > 0) raw.push(rest);
  const out: string[] = [];
  let open = false;
  for (const piece of raw) {
    let chunk = open ? `${FENCE}\n${piece}` : piece;
    if ((piece.split(FENCE).length - 1) % 2 === 1) open = !open;
    if (open) chunk = `${chunk}\n${FENCE}`;
    out.push(chunk);
  }
  return out.filter((c) => c.length > 0);
}

/** The streamed draft's text: the first `limit` code units, with an ellipsis when cut. */
export function draftPreview(text: string, limit = MAX_MESSAGE_CHARS): string {
  const t = text.trim();
  if (t.length <= limit) return t;
  return `${t.slice(0, limit - 1)}…`;
}
