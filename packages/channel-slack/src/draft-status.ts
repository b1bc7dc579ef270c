import { draftMrkdwn, escapeMrkdwn } from './mrkdwn.js';

/**
 * The mrkdwn of a running turn's draft: the streamed text so far and, below it, the tool status
 * block (escaped: a path or host never becomes a link or a mention). The status block is only ever
 * part of a draft; the final answer is built from the turn's text alone and replaces the draft.
 * Returns `''` when there is nothing to show.
 */
export function slackDraftText(raw: string, status: string): string {
  const body = raw.trim() === '' ? '' : draftMrkdwn(raw);
  const block = status.trim() === '' ? '' : escapeMrkdwn(status);
  if (block === '') return body;
  return body === '' ? block : `${body}\n\n${block}`;
}
