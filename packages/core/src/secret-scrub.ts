/**
 * Scrubbing secret values out of text (log lines, error messages, tool summaries).
 *
 * A value shorter than `MIN_SCRUBBED_SECRET_LENGTH` is never replaced by value: a one-character
 * "secret" would otherwise mangle every message it occurs in (`e[redacted]pected string`), and
 * hiding it would protect nothing. Config validation requires longer values wherever a platform's
 * token format guarantees them.
 */

/** Secrets shorter than this are not scrubbed by value. */
export const MIN_SCRUBBED_SECRET_LENGTH = 8;

/** The secret values worth scrubbing: at least the minimum length, distinct, longest first. */
export function scrubbableSecrets(secrets: readonly unknown[]): string[] {
  const out = new Set<string>();
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SCRUBBED_SECRET_LENGTH) out.add(s);
  // Longest first, so a secret containing another one is removed whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * Replaces every occurrence of every scrubbable secret in `text` with `replacement`. Text that
 * contains none of them is returned unchanged. Total: a non-string `text` is stringified.
 */
export function scrubSecretValues(text: unknown, secrets: readonly unknown[], replacement = '[redacted]'): string {
  let out = typeof text === 'string' ? text : printable(text);
  const values = scrubbableSecrets(secrets);
  // A replacement next to the remaining text can, in contrived cases, form another secret: repeat
  // until none is left (bounded: each pass removes at least one occurrence or stops).
  for (let pass = 0; pass < 8; pass++) {
    let changed = false;
    for (const v of values) {
      if (!out.includes(v)) continue;
      out = out.split(v).join(replacement);
      changed = true;
    }
    if (!changed) break;
  }
  return out;
}

function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
