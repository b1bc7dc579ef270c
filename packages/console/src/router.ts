/**
 * Routing under `console.basePath`: the app's paths (`/approvals`) map to the browser's
 * (`<basePath>approvals`) and back. The base path is where the app's own script was served from
 * (`<basePath>assets/index-….js`) — never the query string.
 */

/** The app's pages. */
export type RouteName =
  | 'overview'
  | 'approvals'
  | 'pairing'
  | 'people'
  | 'person'
  | 'policies'
  | 'sessions'
  | 'session'
  | 'usage'
  | 'audit'
  | 'chat'
  | 'not-found';

/** A matched route. */
export interface Route {
  name: RouteName;
  params: Record<string, string>;
  /** The app path it was matched from (`/sessions/abc`). */
  path: string;
}

const PATTERNS: ReadonlyArray<[RouteName, RegExp, readonly string[]]> = [
  ['overview', /^\/$/, []],
  ['approvals', /^\/approvals$/, []],
  ['pairing', /^\/pairing$/, []],
  ['people', /^\/people$/, []],
  ['person', /^\/people\/([^/]+)$/, ['id']],
  ['policies', /^\/policies$/, []],
  ['sessions', /^\/sessions$/, []],
  ['session', /^\/sessions\/([^/]+)$/, ['id']],
  ['usage', /^\/usage$/, []],
  ['audit', /^\/audit$/, []],
  ['chat', /^\/chat$/, []],
];

/** A base path with one leading and one trailing slash (`console` → `/console/`, `` → `/`). */
export function normalizeBase(base: string): string {
  const trimmed = base.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/' : `/${trimmed}/`;
}

/** The base path from the URL of the app's bundle (`http://h/console/assets/index.js` → `/console/`). */
export function basePathOf(scriptUrl: string): string {
  try {
    return normalizeBase(new URL('../', scriptUrl).pathname);
  } catch {
    return '/';
  }
}

/** The app path of a browser pathname under `base`, or null when it lies outside. */
export function toAppPath(pathname: string, base: string): string | null {
  const b = normalizeBase(base);
  if (pathname === b.slice(0, -1)) return '/';
  if (!pathname.startsWith(b)) return null;
  const rest = pathname.slice(b.length).replace(/\/+$/, '');
  return `/${rest}`;
}

/** The browser path of an app path under `base` (`/approvals` → `/console/approvals`). */
export function toHref(appPath: string, base: string): string {
  const b = normalizeBase(base);
  const p = appPath.startsWith('/') ? appPath.slice(1) : appPath;
  return `${b}${p}`;
}

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** The route of an app path (`not-found` when none matches, or a parameter is not valid percent-encoding). */
export function matchRoute(appPath: string): Route {
  const path = appPath.split(/[?#]/)[0] ?? '/';
  for (const [name, re, keys] of PATTERNS) {
    const m = re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    let ok = true;
    keys.forEach((key, i) => {
      const value = decode(m[i + 1] ?? '');
      if (value === null || value === '') ok = false;
      else params[key] = value;
    });
    if (ok) return { name, params, path };
  }
  return { name: 'not-found', params: {}, path };
}

/** The app path of a page with an id (`pathFor('session', 'a/b')` → `/sessions/a%2Fb`). */
export function pathFor(name: 'session' | 'person', id: string): string {
  return `/${name === 'session' ? 'sessions' : 'people'}/${encodeURIComponent(id)}`;
}

/** Pages an operator sees in the navigation, in order. */
export const OPERATOR_NAV: ReadonlyArray<{ path: string; label: string; page: RouteName }> = [
  { path: '/', label: 'Overview', page: 'overview' },
  { path: '/approvals', label: 'Approvals', page: 'approvals' },
  { path: '/pairing', label: 'Pairing', page: 'pairing' },
  { path: '/people', label: 'People', page: 'people' },
  { path: '/policies', label: 'Policies', page: 'policies' },
  { path: '/sessions', label: 'Sessions', page: 'sessions' },
  { path: '/usage', label: 'Usage', page: 'usage' },
  { path: '/audit', label: 'Audit', page: 'audit' },
];
