import { scrubSecretValues } from '@switchboard/core';
import { GrammyError, HttpError } from 'grammy';

const TOKEN_SHAPE = /\d{3,}:[A-Za-z0-9_-]{20,}/g;

/** Removes the bot token (it is part of every Bot API URL) and anything shaped like one. */
export function scrubToken(text: string, token: string): string {
  return scrubSecretValues(text, [token], '[bot token]').replace(TOKEN_SHAPE, '[bot token]');
}

/** The Bot API error code of a failed call, if the API answered. */
export function apiErrorCode(err: unknown): number | undefined {
  return err instanceof GrammyError ? err.error_code : undefined;
}

/** `retry_after` seconds of a 429, if any. */
export function retryAfter(err: unknown): number | undefined {
  return err instanceof GrammyError ? err.parameters.retry_after : undefined;
}

/**
 * A loggable, token-free description of an API failure. grammY's `HttpError.error` (the
 * underlying fetch error) can carry the request URL and so the token: it is never logged raw.
 */
export function describeError(err: unknown, token: string): string {
  if (err instanceof GrammyError) return `${err.error_code}: ${scrubToken(err.description, token)}`;
  if (err instanceof HttpError) {
    const inner = err.error instanceof Error ? err.error.message : String(err.error);
    return scrubToken(`${err.message} (${inner})`, token);
  }
  return scrubToken(err instanceof Error ? err.message : String(err), token);
}

function descriptionHas(err: unknown, needle: string): boolean {
  return err instanceof GrammyError && err.description.includes(needle);
}

/** 400 "message is not modified": the edit is already in place, which counts as success. */
export const isNotModified = (err: unknown): boolean => descriptionHas(err, 'message is not modified');

/** 400 "can't parse entities": the formatted text was refused; resend as plain text. */
export const isParseError = (err: unknown): boolean => descriptionHas(err, "can't parse entities");

/** The message to edit is gone or can no longer be edited: send a new one instead. */
export const isMessageGone = (err: unknown): boolean =>
  descriptionHas(err, 'message to edit not found') || descriptionHas(err, "message can't be edited") || descriptionHas(err, 'message to delete not found');
