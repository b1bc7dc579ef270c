/** The update kinds the adapter asks Telegram for (polling and webhook alike). */
export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;

/** Telegram's limit on one message's text, in UTF-16 code units after entity parsing. */
export const MAX_MESSAGE_CHARS = 4096;

/** The webhook route of an account. */
export function webhookPath(account: string): string {
  return `/channels/telegram/${encodeURIComponent(account)}/webhook`;
}
