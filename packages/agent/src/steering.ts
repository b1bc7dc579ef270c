import type { Message, ToolResultBlock, UserBlock, UserMessage } from './messages.js';

/** The user message that answers a reply cut at the output limit. */
export const CONTINUE_PROMPT = 'Your previous reply was cut off by the output token limit. Continue exactly where you stopped, without repeating anything.';

/**
 * Takes the messages that arrived during the turn (steer mode) and adds them to the
 * conversation as text blocks: onto the trailing user message (the last tool results) when there
 * is one, else as a new user message. Returns the injected message for the `user_message` event
 * (a new object holding the injected blocks only), or null when nothing was waiting.
 */
export function injectSteered(messages: Message[], drainInjected: (() => string[]) | undefined): UserMessage | null {
  const injected = drainInjected?.() ?? [];
  if (injected.length === 0) return null;
  const blocks: UserBlock[] = injected.map((text) => ({ type: 'text', text }));
  const tail = messages.at(-1);
  if (tail?.role === 'user') tail.content = [...tail.content, ...blocks];
  else messages.push({ role: 'user', content: blocks });
  return { role: 'user', content: blocks };
}

/** Appends the "continue" prompt after a cut reply; returns it for the `user_message` event. */
export function appendContinuation(messages: Message[]): UserMessage {
  const blocks: UserBlock[] = [{ type: 'text', text: CONTINUE_PROMPT }];
  messages.push({ role: 'user', content: blocks });
  return { role: 'user', content: blocks };
}

/** Appends one batch's tool results as the next user message. */
export function appendToolResults(messages: Message[], results: ToolResultBlock[]): void {
  messages.push({ role: 'user', content: results });
}
