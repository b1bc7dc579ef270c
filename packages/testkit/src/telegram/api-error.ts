import type { TgEnvelope, TgFault } from './types.js';

/** A Bot API failure a method handler throws; the server turns it into the error envelope. */
export class TgApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
  }

  /** The `{ok:false,error_code,description,parameters?}` envelope. */
  toEnvelope(): TgEnvelope {
    return { ok: false, error_code: this.code, description: this.description, ...(this.parameters ? { parameters: this.parameters } : {}) };
  }
}

/** `400 Bad Request: <what>`. */
export function badRequest(what: string): TgApiError {
  return new TgApiError(400, `Bad Request: ${what}`);
}

/** The description Telegram uses for an error status when the test does not give one. */
export function defaultDescription(status: number, retryAfter?: number): string {
  switch (status) {
    case 400:
      return 'Bad Request';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden: bot was blocked by the user';
    case 404:
      return 'Not Found';
    case 409:
      return 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
    case 429:
      return `Too Many Requests: retry after ${retryAfter ?? 1}`;
    case 502:
      return 'Bad Gateway';
    default:
      return status >= 500 ? 'Internal Server Error' : `Error ${status}`;
  }
}

/** The envelope an injected fault answers with. */
export function faultError(fault: TgFault): TgApiError {
  const status = fault.status ?? 500;
  const retryAfter = fault.retryAfter ?? (status === 429 ? 1 : undefined);
  const parameters: { retry_after?: number; migrate_to_chat_id?: number } = {};
  if (retryAfter !== undefined) parameters.retry_after = retryAfter;
  if (fault.migrateToChatId !== undefined) parameters.migrate_to_chat_id = fault.migrateToChatId;
  const hasParams = Object.keys(parameters).length > 0;
  return new TgApiError(status, fault.description ?? defaultDescription(status, retryAfter), hasParams ? parameters : undefined);
}

/** The `message is not modified` description, verbatim. */
export const NOT_MODIFIED =
  'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';

/** The 409 `getUpdates` answers while a webhook is set, verbatim. */
export const WEBHOOK_ACTIVE = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";

/** The 409 an older pending `getUpdates` gets when a newer one arrives, verbatim. */
export const TERMINATED_BY_OTHER = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';

/** Verbatim Bot API descriptions the fake produces, for assertions in gateway tests. */
export const TELEGRAM_DESCRIPTIONS = {
  notModified: `Bad Request: ${NOT_MODIFIED}`,
  tooLong: 'Bad Request: message is too long',
  textEmpty: 'Bad Request: message text is empty',
  editNotFound: 'Bad Request: message to edit not found',
  deleteNotFound: 'Bad Request: message to delete not found',
  replyNotFound: 'Bad Request: message to be replied not found',
  chatNotFound: 'Bad Request: chat not found',
  parseEntitiesPrefix: "Bad Request: can't parse entities: ",
  webhookActive: WEBHOOK_ACTIVE,
  terminatedByOther: TERMINATED_BY_OTHER,
  unauthorized: 'Unauthorized',
  methodNotFound: 'Not Found: method not found',
} as const;
