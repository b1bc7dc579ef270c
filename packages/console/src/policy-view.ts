/** Pure helpers behind the policy, person and audit forms (no UI). */

export interface Capability {
  id: string;
  kind: string;
  source: string;
  description?: string;
  offeredTo?: string[];
  enabledAt?: Array<{ kind: string; id?: string }>;
  disabledAt?: Array<{ kind: string; id?: string; ruleId?: string }>;
}

/** A JSON field edit: the parsed value, or an error naming the field. */
export function parseFieldValue(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${field}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Whether a scope list holds exactly this scope. */
export function atScope(list: Array<{ kind: string; id?: string }> | undefined, kind: string, id: string | undefined): boolean {
  return (list ?? []).some((s) => s.kind === kind && (kind === 'gateway' ? true : s.id === id));
}

/**
 * A capability at a scope: `off` (an operator deny there), `on` (an offer-switch there, or — at a
 * role scope — offered to that role by default), or `default` (nothing stored there; other scopes decide).
 */
export function capabilityState(c: Capability, kind: string, id: string): { on: boolean | null; label: 'on' | 'off' | 'default' } {
  if (atScope(c.disabledAt, kind, id)) return { on: false, label: 'off' };
  if (atScope(c.enabledAt, kind, id)) return { on: true, label: 'on' };
  if (kind === 'role' && c.kind === 'tool') return (c.offeredTo ?? []).includes(id) ? { on: true, label: 'on' } : { on: false, label: 'off' };
  return { on: null, label: 'default' };
}

/** The first sentence of a description. */
export function firstSentence(text: string): string {
  const m = /^(.*?[.!?])(\s|$)/s.exec(text);
  return m?.[1] ?? text;
}

/** A budget limit from two inputs (empty = none). */
export function limitOf(tokens: string, usd: string): { tokens?: number; usd?: number } | undefined {
  const t = tokens.trim() === '' ? undefined : Number(tokens);
  const u = usd.trim() === '' ? undefined : Number(usd);
  if (t !== undefined && (!Number.isInteger(t) || t <= 0)) throw new Error('Tokens must be a whole number above 0.');
  if (u !== undefined && (!Number.isFinite(u) || u <= 0)) throw new Error('USD must be a number above 0.');
  if (t === undefined && u === undefined) return undefined;
  return { ...(t !== undefined ? { tokens: t } : {}), ...(u !== undefined ? { usd: u } : {}) };
}

/** A `since` filter from a `datetime-local` value (read as UTC), or undefined when empty or not a date. */
export function sinceParam(local: string): string | undefined {
  if (!local) return undefined;
  const t = Date.parse(`${local.length === 16 ? `${local}:00` : local}Z`);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}
