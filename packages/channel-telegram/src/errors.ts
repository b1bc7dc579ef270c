import { describeThrown, scrubSecretValues } from '@switchboard/core';
import { GrammyError, HttpError } from 'grammy';

const TOKEN_SHAPE = /\d{3,}:[A-Za-z0-9_-]{20,}/g;

/**
 * Removes the bot token (it is part of every Bot API URL) and anything shaped like one. Total:
 * a non-string `text` (a missing `description`) is described, never thrown on.
 */
export function scrubToken(text: unknown, token: unknown): string {
  const s = typeof text === 'string' ? text : text === undefined ? '(no description)' : describeThrown(text);
  const exact = typeof token === 'string' ? scrubSecretValues(s, [token], '[bot token]') : s;
  return exact.replace(TOKEN_SHAPE, '[bot token]');
}

/** `instanceof` that a hostile value (a proxy whose prototype trap throws) cannot turn into a throw. */
function isA<T>(err: unknown, cls: abstract new (...args: never[]) => T): err is T {
  try {
    return err instanceof cls;
  } catch {
    return false;
  }
}

/** Reads a property without trusting the object (getters may throw, proxies may be revoked). */
function field(obj: unknown, key: string): unknown {
  try {
    return obj !== null && (typeof obj === 'object' || typeof obj === 'function') ? (obj as Record<string, unknown>)[key] : undefined;
  } catch {
    return undefined;
  }
}

/** The Bot API error code of a failed call, if the API answered with one. */
export function apiErrorCode(err: unknown): number | undefined {
  if (!isA(err, GrammyError)) return undefined;
  const code = field(err, 'error_code');
  return typeof code === 'number' ? code : undefined;
}

/** `retry_after` seconds of a 429, if any. */
export function retryAfter(err: unknown): number | undefined {
  if (!isA(err, GrammyError)) return undefined;
  const after = field(field(err, 'parameters'), 'retry_after');
  return typeof after === 'number' && Number.isFinite(after) && after >= 0 ? after : undefined;
}

/** The `description` of an API error, or '' when the API sent none. */
function description(err: unknown): string {
  const d = field(err, 'description');
  return typeof d === 'string' ? d : '';
}

/**
 * The host and errno-style cause of a network failure (`ENOTFOUND`, `ECONNREFUSED`, a timeout),
 * from grammY's `HttpError` and the fetch error inside it; undefined when the API answered.
 */
export function networkCause(err: unknown): { host?: string; cause: string } | undefined {
  if (!isA(err, HttpError)) return undefined;
  const inner = field(err, 'error');
  const causes = [inner, field(inner, 'cause')];
  let code: string | undefined;
  let host: string | undefined;
  for (const c of causes) {
    const k = field(c, 'code') ?? field(c, 'errno');
    if (code === undefined && typeof k === 'string' && /^[A-Z_]{3,}$/.test(k)) code = k;
    const h = field(c, 'hostname') ?? field(c, 'host');
    if (host === undefined && typeof h === 'string' && h.length > 0) host = h;
  }
  const message = typeof field(inner, 'message') === 'string' ? (field(inner, 'message') as string) : '';
  code ??= /\b(E[A-Z]{3,})\b/.exec(message)?.[1];
  if (host === undefined) {
    const m = /\b(?:ENOTFOUND|EAI_AGAIN)\s+([A-Za-z0-9.-]+)/.exec(message) ?? /https?:\/\/([^/:\s]+)/.exec(message);
    if (m?.[1]) host = m[1];
  }
  const type = field(inner, 'type');
  const name = field(inner, 'name');
  const cause =
    code ??
    (type === 'request-timeout' || name === 'AbortError' || /timed out/i.test(message)
      ? 'timeout'
      : typeof name === 'string' && name !== 'Error'
        ? name
        : 'network error');
  return host !== undefined ? { host, cause } : { cause };
}

/**
 * A loggable, token-free description of an API failure. Total: any thrown value, any missing
 * field. grammY's `HttpError.error` (the underlying fetch error) can carry the request URL and so
 * the token: it is never logged raw.
 */
export function describeError(err: unknown, token: string): string {
  try {
    if (isA(err, GrammyError)) {
      const code = apiErrorCode(err);
      const desc = description(err);
      return scrubToken(`${code ?? 'error'}: ${desc || '(no description)'}`, token);
    }
    if (isA(err, HttpError)) {
      const net = networkCause(err);
      const inner = field(err, 'error');
      const innerMsg = typeof field(inner, 'message') === 'string' ? (field(inner, 'message') as string) : describeThrown(inner);
      const where = net ? `${net.cause}${net.host ? ` ${net.host}` : ''}: ` : '';
      return scrubToken(`${where}${describeThrown(err)} (${innerMsg})`, token);
    }
    return scrubToken(describeThrown(err), token);
  } catch {
    return '(an error that cannot be described)';
  }
}

function descriptionHas(err: unknown, needle: string): boolean {
  return isA(err, GrammyError) && description(err).includes(needle);
}

/** 400 "message is not modified": the edit is already in place, which counts as success. */
export const isNotModified = (err: unknown): boolean => descriptionHas(err, 'message is not modified');

/** 400 "can't parse entities": the formatted text was refused; resend as plain text. */
export const isParseError = (err: unknown): boolean => descriptionHas(err, "can't parse entities");

/** The message to edit is gone or can no longer be edited: send a new one instead. */
export const isMessageGone = (err: unknown): boolean =>
  descriptionHas(err, 'message to edit not found') || descriptionHas(err, "message can't be edited") || descriptionHas(err, 'message to delete not found');

/** 401 (token revoked or wrong) and 404 on every method (no such bot): retrying will not help. */
export const isPermanentAuthError = (err: unknown): boolean => {
  const code = apiErrorCode(err);
  return code === 401 || (code === 404 && /not found/i.test(description(err)) && !/method/i.test(description(err)));
};
