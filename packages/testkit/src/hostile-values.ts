/** A getter or trap that throws. */
const throwingTrap = () => {
  throw new Error('trap');
};

/**
 * Thrown values that break naive error describers and fast-check cannot generate (it cannot hold
 * proxies): throwing getters, hostile and revoked proxies, cycles, values without a prototype or a
 * usable string form. A fresh list on every call, so a test may mutate what it gets.
 */
export function hostileThrownValues(): unknown[] {
  const revoked = () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  };
  const loop = new Error('loop') as Error & { cause: unknown };
  loop.cause = loop;
  return [
    Object.defineProperty({}, 'code', { get: throwingTrap }),
    Object.defineProperty(new Error('x'), 'message', { get: throwingTrap }),
    Object.defineProperty(new Error('x'), 'cause', { get: throwingTrap }),
    Object.defineProperty(new Error('x'), 'name', { get: throwingTrap }),
    new Error('x', { cause: Object.defineProperty({}, 'message', { get: throwingTrap }) }),
    new Error('x', { cause: Object.defineProperty({}, 'code', { get: throwingTrap }) }),
    new Proxy({}, { get: throwingTrap, has: throwingTrap, getPrototypeOf: throwingTrap, ownKeys: throwingTrap }),
    new Proxy(new Error('x'), { get: throwingTrap, getPrototypeOf: throwingTrap }),
    new Error('x', { cause: new Proxy({}, { get: throwingTrap, getPrototypeOf: throwingTrap }) }),
    revoked(),
    new Error('x', { cause: revoked() }),
    loop,
    { toString: () => ({}), valueOf: () => ({}) },
    Object.create(null),
    Symbol('s'),
    10n,
    undefined,
    null,
  ];
}
