import { describe, expect, it } from 'vitest';
import { UnauthenticatedCaps } from '../src/unauthenticated-caps.js';

describe('UnauthenticatedCaps', () => {
  it('caps per address and in all, naming the config key; a release frees the slot once', () => {
    const caps = new UnauthenticatedCaps({ account: 'main', perAddress: 2, total: 3 });
    const a1 = caps.reserve('a');
    const a2 = caps.reserve('a');
    expect(typeof a1).toBe('function');
    expect(typeof a2).toBe('function');
    expect(caps.reserve('a')).toMatchObject({
      status: 429,
      code: 'too_many_unauthenticated',
      message: expect.stringContaining('channels.websocket.accounts.main.maxUnauthenticatedPerAddress'),
    });
    const b1 = caps.reserve('b');
    expect(typeof b1).toBe('function');
    expect(caps.reserve('c')).toMatchObject({ status: 503, message: expect.stringContaining('channels.websocket.accounts.main.maxUnauthenticated ') });
    (a1 as () => void)();
    (a1 as () => void)();
    expect(caps.size).toBe(2);
    expect(typeof caps.reserve('c')).toBe('function');
    expect(caps.reserve('d')).toMatchObject({ status: 503 });
  });

  it('keys by whatever address key it is given (e.g. "__proto__") without prototype surprises', () => {
    const caps = new UnauthenticatedCaps({ account: 'default', perAddress: 1, total: 10 });
    expect(typeof caps.reserve('__proto__')).toBe('function');
    expect(caps.reserve('__proto__')).toMatchObject({ status: 429 });
    expect(typeof caps.reserve('constructor')).toBe('function');
  });
});
