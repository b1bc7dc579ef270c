/** A plain object (not an array, not null, not a class instance such as Date). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Merges `override` over `base` into a new object; neither input is modified.
 * Plain objects merge key by key; arrays and primitives replace; a key present in `override`
 * with the value `undefined` deletes that key from the result.
 */
export function deepMerge<T extends Record<string, unknown>>(base: T, override: Record<string, unknown> | undefined): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) out[k] = isPlainObject(v) ? deepMerge(v, {}) : Array.isArray(v) ? [...v] : v;
  if (!override) return out as T;
  for (const [k, v] of Object.entries(override)) {
    if (v === undefined) {
      delete out[k];
    } else if (isPlainObject(v) && isPlainObject(out[k])) {
      out[k] = deepMerge(out[k] as Record<string, unknown>, v);
    } else if (isPlainObject(v)) {
      out[k] = deepMerge({}, v);
    } else {
      out[k] = Array.isArray(v) ? [...v] : v;
    }
  }
  return out as T;
}
