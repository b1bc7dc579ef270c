import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basePathOf, matchRoute, normalizeBase, pathFor, toAppPath, toHref } from '../src/router';

describe('routing under a base path', () => {
  it('normalises base paths', () => {
    expect(normalizeBase('')).toBe('/');
    expect(normalizeBase('/')).toBe('/');
    expect(normalizeBase('console')).toBe('/console/');
    expect(normalizeBase('//ops/console//')).toBe('/ops/console/');
  });

  it("reads the base path from the bundle's own URL, never from the page's query", () => {
    expect(basePathOf('http://127.0.0.1:7420/assets/index-abc.js')).toBe('/');
    expect(basePathOf('http://127.0.0.1:7420/console/assets/index-abc.js')).toBe('/console/');
    expect(basePathOf('http://127.0.0.1:7420/ops/console/assets/index-abc.js?gatewayUrl=ws://evil.example')).toBe('/ops/console/');
    expect(basePathOf('not a url')).toBe('/');
  });

  it('maps browser paths to app paths and back', () => {
    expect(toAppPath('/console/approvals', '/console/')).toBe('/approvals');
    expect(toAppPath('/console/', '/console/')).toBe('/');
    expect(toAppPath('/console', '/console/')).toBe('/');
    expect(toAppPath('/console/sessions/abc/', '/console/')).toBe('/sessions/abc');
    expect(toAppPath('/consolex/approvals', '/console/')).toBeNull();
    expect(toAppPath('/api/v1/x', '/console/')).toBeNull();
    expect(toHref('/approvals', '/console/')).toBe('/console/approvals');
    expect(toHref('/', '/console/')).toBe('/console/');
    expect(toHref('/usage', '/')).toBe('/usage');
  });

  it('matches every page, with percent-encoded ids', () => {
    expect(matchRoute('/')).toMatchObject({ name: 'overview' });
    for (const name of ['approvals', 'pairing', 'people', 'policies', 'sessions', 'usage', 'audit', 'chat']) expect(matchRoute(`/${name}`).name).toBe(name);
    expect(matchRoute('/sessions/a%2Fb')).toMatchObject({ name: 'session', params: { id: 'a/b' } });
    expect(matchRoute(pathFor('person', 'p?1#x'))).toMatchObject({ name: 'person', params: { id: 'p?1#x' } });
    expect(matchRoute('/sessions/%E0%A4%A')).toMatchObject({ name: 'not-found' });
    expect(matchRoute('/sessions/a/b').name).toBe('not-found');
    expect(matchRoute('/nope').name).toBe('not-found');
    expect(matchRoute('/approvals?x=1').name).toBe('approvals');
  });

  it('round-trips any app path under any base (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 3 }), fc.array(segment, { minLength: 1, maxLength: 3 }), (base, path) => {
        const b = normalizeBase(base.join('/'));
        const appPath = `/${path.join('/')}`;
        expect(toAppPath(toHref(appPath, b), b)).toBe(appPath);
      }),
    );
  });

  it('never throws on hostile paths and ids (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 50 }), (path, base) => {
        const r = matchRoute(path);
        expect(typeof r.name).toBe('string');
        toAppPath(path, base);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 100 }), (id) => {
        expect(matchRoute(pathFor('session', id))).toMatchObject({ name: 'session', params: { id } });
      }),
    );
  });
});
