/** One search hit as `web_search` returns it. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** A search backend over its documented HTTP API. */
export interface SearchProvider {
  /** `searxng`, `brave`, `tavily`. */
  readonly name: string;
  /**
   * The ranked results for `query`, best first, at most `count`. Rejects with a
   * {@link SearchError} worded for the model; never puts the API key in a message.
   */
  search(query: string, count: number, signal: AbortSignal): Promise<SearchResult[]>;
}

/** Resolved `tools.webSearch` settings of a configured provider. */
export interface SearchProviderSettings {
  provider: 'searxng' | 'brave' | 'tavily';
  /** The API's base URL (operator config, so the SSRF guard does not apply). */
  baseUrl: string;
  apiKey?: string;
}

/** A failed search, worded for the model. */
export class SearchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchError';
  }
}

/** Default base URLs of the hosted APIs. */
export const SEARCH_BASE_URLS = { brave: 'https://api.search.brave.com', tavily: 'https://api.tavily.com' } as const;

const MAX_BODY = 4 * 1024 * 1024;

/** The provider for the settings. */
export function createSearchProvider(settings: SearchProviderSettings): SearchProvider {
  const base = settings.baseUrl.replace(/\/+$/u, '');
  switch (settings.provider) {
    case 'searxng':
      return { name: 'searxng', search: (q, count, signal) => searxng(base, q, count, signal) };
    case 'brave':
      return { name: 'brave', search: (q, count, signal) => brave(base, settings.apiKey ?? '', q, count, signal) };
    case 'tavily':
      return { name: 'tavily', search: (q, count, signal) => tavily(base, settings.apiKey ?? '', q, count, signal) };
  }
}

/** SearXNG `GET /search?format=json` (the instance must list `json` in `search.formats`). */
async function searxng(base: string, query: string, count: number, signal: AbortSignal): Promise<SearchResult[]> {
  const url = `${base}/search?${new URLSearchParams({ q: query, format: 'json', pageno: '1' })}`;
  const res = await send('SearXNG', url, { headers: { accept: 'application/json' }, signal });
  if (res.status === 403) {
    throw new SearchError('SearXNG answered 403: its JSON format is off. Enable it in the instance settings.yml (search.formats: [html, json])');
  }
  const body = await jsonOf('SearXNG', res);
  const results = arrayAt(body, 'results');
  return results
    .map((r) => ({ title: str(r, 'title'), url: str(r, 'url'), snippet: str(r, 'content'), score: num(r, 'score') }))
    .filter((r) => r.url !== '')
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, count)
    .map(({ title, url, snippet }) => ({ title, url, snippet }));
}

/** Brave `GET /res/v1/web/search` with `X-Subscription-Token`. */
async function brave(base: string, key: string, query: string, count: number, signal: AbortSignal): Promise<SearchResult[]> {
  const params = new URLSearchParams({ q: query, count: String(Math.min(count, 20)), text_decorations: 'false' });
  const res = await send('Brave Search', `${base}/res/v1/web/search?${params}`, {
    headers: { accept: 'application/json', 'x-subscription-token': key },
    signal,
  });
  const body = await jsonOf('Brave Search', res);
  const web = body !== null && typeof body === 'object' && Object.hasOwn(body, 'web') ? (body as { web: unknown }).web : undefined;
  return arrayAt(web, 'results')
    .map((r) => ({ title: str(r, 'title'), url: str(r, 'url'), snippet: str(r, 'description') }))
    .filter((r) => r.url !== '')
    .slice(0, count);
}

/** Tavily `POST /search` with a bearer key. */
async function tavily(base: string, key: string, query: string, count: number, signal: AbortSignal): Promise<SearchResult[]> {
  const res = await send('Tavily', `${base}/search`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, max_results: Math.min(count, 20), search_depth: 'basic' }),
    signal,
  });
  const body = await jsonOf('Tavily', res);
  return arrayAt(body, 'results')
    .map((r) => ({ title: str(r, 'title'), url: str(r, 'url'), snippet: str(r, 'content') }))
    .filter((r) => r.url !== '')
    .slice(0, count);
}

async function send(api: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, redirect: 'error' });
  } catch (err) {
    if (init.signal?.aborted) throw init.signal.reason;
    throw new SearchError(`${api} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function jsonOf(api: string, res: Response): Promise<unknown> {
  const text = await limitedText(res);
  if (!res.ok) throw new SearchError(`${api} answered HTTP ${res.status}${errorDetail(text)}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SearchError(`${api} answered with a body that is not JSON`);
  }
}

async function limitedText(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_BODY) {
      await reader.cancel();
      throw new SearchError(`the search API answered more than ${MAX_BODY} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A short error detail from the API's error body (SearXNG `error`, Brave `error.detail`, Tavily `detail.error`). */
function errorDetail(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return '';
  }
  const pick = (v: unknown, ...path: string[]): string | undefined => {
    let cur = v;
    for (const k of path) {
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined;
      cur = (cur as Record<string, unknown>)[k];
    }
    return typeof cur === 'string' ? cur : undefined;
  };
  const detail = pick(body, 'error', 'detail') ?? pick(body, 'detail', 'error') ?? pick(body, 'error') ?? pick(body, 'detail');
  return detail === undefined ? '' : `: ${detail.slice(0, 300)}`;
}

function arrayAt(v: unknown, key: string): Record<string, unknown>[] {
  if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return [];
  const a = (v as Record<string, unknown>)[key];
  return Array.isArray(a) ? a.filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x)) : [];
}

function str(r: Record<string, unknown>, key: string): string {
  const v = Object.hasOwn(r, key) ? r[key] : undefined;
  return typeof v === 'string' ? v.replace(/\s+/gu, ' ').trim() : '';
}

function num(r: Record<string, unknown>, key: string): number {
  const v = Object.hasOwn(r, key) ? r[key] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
