import { draftPreview } from './chunk.js';
import { MAX_MESSAGE_CHARS } from './options.js';

/**
 * The plain-text draft of a running turn: the streamed text so far (cut to leave room) and, below
 * it, the tool status block. The status block is only ever part of a draft: the final answer is
 * built from the turn's text alone and replaces the draft. Returns `''` when there is nothing to show.
 */
export function draftWithStatus(text: string, status: string, limit = MAX_MESSAGE_CHARS): string {
  const block = status.trim() === '' ? '' : draftPreview(status, Math.floor(limit / 2));
  if (block === '') return draftPreview(text, limit);
  const body = draftPreview(text, limit - block.length - 2);
  return body === '' ? block : `${body}\n\n${block}`;
}
