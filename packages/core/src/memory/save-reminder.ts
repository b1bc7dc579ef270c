import type { Message } from '@switchboard/agent';

/**
 * From this fraction of the auto-compaction threshold on (and up to the threshold itself) a
 * request carries the save reminder: the band just before the history is summarized.
 */
export const SAVE_REMINDER_FROM = 0.85;

/** The reminder the model reads at the end of its request before an auto-compaction. */
export const SAVE_REMINDER_TEXT =
  '[Gateway note: this conversation is close to its context limit and will soon be summarized, which loses detail. ' +
  'If the person told you something worth keeping beyond this conversation (facts about them, decisions, preferences), ' +
  'save it now with memory_save — only what they would expect you to remember. This note is from the gateway, not the person.]';

/** Whether a request of `tokens` is in the reminder band below `threshold` (both in tokens). */
export function inReminderBand(tokens: number, threshold: number): boolean {
  return tokens > SAVE_REMINDER_FROM * threshold && tokens <= threshold;
}

/**
 * `send` with the save reminder in its last message when that is a user message (the person's
 * words or tool results): after any `tool_result` blocks (the API wants those first) and before
 * the message's text, so the person's own words stay last. Unchanged when the last message is the
 * assistant's. A view only: the reminder is never stored.
 */
export function withSaveReminder(send: readonly Message[]): Message[] {
  const out = [...send];
  const last = out.at(-1);
  if (last?.role !== 'user') return out;
  const at = last.content.findIndex((b) => b.type !== 'tool_result');
  const cut = at === -1 ? last.content.length : at;
  out[out.length - 1] = { ...last, content: [...last.content.slice(0, cut), { type: 'text', text: SAVE_REMINDER_TEXT }, ...last.content.slice(cut)] };
  return out;
}
