/**
 * The value `record` holds under `key` as its own property, or `undefined`. Use it for every
 * record keyed by outside input (room, account, agent, tool, model or event names): a plain
 * `record[key]` finds `Object.prototype`'s members for keys such as `toString`, `constructor` or
 * `__proto__`.
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}
