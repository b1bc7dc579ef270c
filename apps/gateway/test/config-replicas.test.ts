import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveReplicaId } from '../src/config-replicas.js';
import { configFailure, parseTestConfig as parse } from './config-fixture.js';

describe('replicas and gateway.replicaId', () => {
  it('defaults: a 15 s lease, no configured id; the default id is new per start and valid', () => {
    const cfg = parse('{}');
    expect(cfg.replicas).toEqual({ leaseTtl: 15_000 });
    expect(cfg.gateway.replicaId).toBeUndefined();
    const a = resolveReplicaId(undefined);
    expect(a).toMatch(new RegExp(`-${process.pid}-[0-9a-f]{6}$`));
    expect(resolveReplicaId(undefined)).not.toBe(a);
    expect(parse(`{ gateway: { replicaId: ${JSON.stringify(a.slice(0, 128))} } }`).gateway.replicaId).toBe(a.slice(0, 128));
    expect(resolveReplicaId('sb1')).toBe('sb1');
  });

  it('takes a duration and a name', () => {
    const cfg = parse('{ replicas: { leaseTtl: "2s" }, gateway: { replicaId: "eu-1.sb:2" } }');
    expect(cfg.replicas.leaseTtl).toBe(2000);
    expect(cfg.gateway.replicaId).toBe('eu-1.sb:2');
  });

  it.each([
    ['{ replicas: { leaseTtl: "1s" } }', /replicas\.leaseTtl: must be at least 2s/],
    ['{ replicas: { leaseTtl: "11m" } }', /replicas\.leaseTtl: must be at most 10min/],
    ['{ replicas: { leaseTtl: "soon" } }', /replicas\.leaseTtl: expected a duration/],
    ['{ replicas: { leaseTtl: "15s", renew: "5s" } }', /replicas/],
    ['{ gateway: { replicaId: "" } }', /gateway\.replicaId/],
    ['{ gateway: { replicaId: "two words" } }', /gateway\.replicaId/],
    ['{ gateway: { replicaId: 7 } }', /gateway\.replicaId/],
  ])('%s is refused naming the key', (text, message) => {
    expect(configFailure(text)).toMatch(message);
  });

  it('hostile replica ids are refused or kept verbatim, never throw anything but a config error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          // `${…}` is a variable reference, expanded before validation (tested with the variables).
          fc.string({ maxLength: 300 }).filter((s) => !s.includes('$')),
          fc.constantFrom('__proto__', 'constructor', '../x', 'a'.repeat(129), 'a\nb', 'a\u0000b'),
        ),
        (id) => {
          const text = `{ gateway: { replicaId: ${JSON.stringify(id)} } }`;
          const ok = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(id);
          if (ok) expect(parse(text).gateway.replicaId).toBe(id);
          else expect(configFailure(text)).toMatch(/gateway\.replicaId/);
        },
      ),
    );
  });
});
