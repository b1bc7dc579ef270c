// SCAFFOLD (issue 19, deleted once every PostgreSQL repository is built): an object whose every method rejects.
export function notBuilt<T>(name: string): T {
  return new Proxy({}, { get: (_t, k) => (k === 'then' ? undefined : () => Promise.reject(new Error(`${name}.${String(k)}: not built yet`))) }) as T;
}
