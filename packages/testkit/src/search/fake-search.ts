import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from '../loopback.js';

/** One request a search fake received. */
export interface SearchRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A search hit the fakes serve (each API renames the fields its own way). */
export interface FakeHit {
  title: string;
  url: string;
  snippet: string;
  score: number;
}

/** A loopback search API. */
export interface FakeSearchApi {
  /** `http://127.0.0.1:PORT`: the provider's `baseUrl`. */
  readonly url: string;
  readonly requests: SearchRequest[];
  /** Sets the hits for one query (default: three hits derived from the query, best first). */
  setHits(query: string, hits: FakeHit[]): void;
  close(): Promise<void>;
}

/** The SearXNG fake: its JSON format can be switched off, as a stock instance ships it. */
export interface FakeSearxng extends FakeSearchApi {
  /** Whether `format=json` is enabled (`search.formats` lists `json`); off answers 403 like SearXNG. */
  json: boolean;
}

/** The default hits for a query: three, best first, whose titles name the query. */
export function defaultHits(query: string): FakeHit[] {
  const slug = encodeURIComponent(query.toLowerCase().replace(/\s+/gu, '-'));
  return [1, 2, 3].map((n) => ({
    title: `${query} — result ${n}`,
    url: `https://example.org/${slug}/${n}`,
    snippet: `Snippet ${n} about ${query}.`,
    score: 10 - n * 2,
  }));
}

type Handler = (req: SearchRequest, hits: (q: string) => FakeHit[], res: ServerResponse) => void;

async function startApi<T extends object>(handler: Handler, extra: T): Promise<FakeSearchApi & T> {
  const requests: SearchRequest[] = [];
  const table = new Map<string, FakeHit[]>();
  const hitsFor = (q: string) => table.get(q) ?? defaultHits(q);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const entry: SearchRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(entry);
      try {
        handler(entry, hitsFor, res);
      } catch {
        json(res, 500, { error: 'fake failed' });
      }
    });
  });
  const port = await listenLoopback(server);
  const api: FakeSearchApi = {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHits: (q, hits) => void table.set(q, hits),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return Object.assign(extra, api);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/**
 * A SearXNG instance (`GET /search` or `/`, `q`, `format`, `pageno`): with `format=json` it
 * answers SearXNG's JSON body (`query`, `results[]` with `url`, `title`, `content`, `engine`,
 * `engines`, `score`, `category`, `positions`, `parsed_url`, plus `answers`, `corrections`,
 * `infoboxes`, `suggestions`, `unresponsive_engines`), best score first; 403 when JSON is off
 * (the shipped default); 400 `{"error":"No query"}` without `q`; HTML otherwise.
 */
export async function startFakeSearxng(opts: { json?: boolean } = {}): Promise<FakeSearxng> {
  const state = { json: opts.json ?? true };
  const handler: Handler = (req, hits, res) => {
    if (req.path !== '/search' && req.path !== '/') return void res.writeHead(404).end();
    const params = req.method === 'POST' ? new URLSearchParams(req.body) : req.query;
    const format = params.get('format') ?? 'html';
    if (format === 'json' && !state.json) return void res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>403 Forbidden</body></html>');
    const q = params.get('q');
    if (!q) return json(res, 400, { error: 'No query' });
    if (format !== 'json') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>results for ${q}</body></html>`);
    const results = [...hits(q)]
      .sort((a, b) => b.score - a.score)
      .map((h, i) => {
        const u = new URL(h.url);
        return {
          url: h.url,
          title: h.title,
          content: h.snippet,
          engine: 'duckduckgo',
          engines: ['duckduckgo', 'brave'],
          score: h.score,
          category: 'general',
          positions: [i + 1],
          parsed_url: [u.protocol.slice(0, -1), u.host, u.pathname, '', u.search.slice(1), u.hash.slice(1)],
          template: 'default.html',
          thumbnail: '',
          img_src: '',
          publishedDate: null,
        };
      });
    json(res, 200, { query: q, results, answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: [['wikidata', 'timeout']] });
  };
  const fake = await startApi(handler, {
    get json() {
      return state.json;
    },
    set json(v: boolean) {
      state.json = v;
    },
  });
  return fake as FakeSearxng;
}

/**
 * Brave Search's web API (`GET /res/v1/web/search`, `X-Subscription-Token`): `{type:"search",
 * query, web:{type, results[{type, title, url, description, age, language, meta_url,
 * family_friendly}], family_friendly}, mixed}` with `count` results at most; a wrong key is 422
 * `SUBSCRIPTION_TOKEN_INVALID` and a missing `q` 422 `VALIDATION`, in Brave's `ErrorResponse`
 * shape; successful answers carry the rate-limit headers.
 */
export async function startFakeBrave(opts: { apiKey: string }): Promise<FakeSearchApi> {
  const error = (res: ServerResponse, code: string, detail: string, component?: string) =>
    json(res, 422, {
      type: 'ErrorResponse',
      error: { id: randomUUID(), status: 422, code, detail, meta: component ? { component } : {} },
      time: Math.floor(Date.now() / 1000),
    });
  return startApi((req, hits, res) => {
    if (req.path !== '/res/v1/web/search') return void res.writeHead(404).end();
    if (req.headers['x-subscription-token'] !== opts.apiKey)
      return error(res, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.', 'authentication');
    const q = req.query.get('q');
    if (!q) return error(res, 'VALIDATION', 'Unable to validate request parameter(s)');
    const count = Math.min(Number(req.query.get('count') ?? 20) || 20, 20);
    const results = hits(q)
      .slice(0, count)
      .map((h) => ({
        type: 'search_result',
        title: h.title,
        url: h.url,
        description: h.snippet,
        age: '2 days ago',
        language: 'en',
        family_friendly: true,
        meta_url: { scheme: 'https', netloc: new URL(h.url).host, hostname: new URL(h.url).hostname, path: new URL(h.url).pathname },
      }));
    json(
      res,
      200,
      {
        type: 'search',
        query: { original: q, more_results_available: false },
        web: { type: 'search', results, family_friendly: true },
        mixed: { type: 'mixed', main: results.map((_r, index) => ({ type: 'web', index, all: false })), top: [], side: [] },
      },
      {
        'x-ratelimit-limit': '1, 15000',
        'x-ratelimit-policy': '1;w=1, 15000;w=2592000',
        'x-ratelimit-remaining': '0, 14999',
        'x-ratelimit-reset': '1, 2419200',
      },
    );
  }, {});
}

/**
 * Tavily's search API (`POST /search`, `Authorization: Bearer <key>`, JSON body with `query`,
 * `max_results`): `{query, answer, images:[], results[{title, url, content, score, raw_content}],
 * response_time, request_id}`; a wrong key is 401 and a missing query 400, as
 * `{"detail":{"error":…}}`.
 */
export async function startFakeTavily(opts: { apiKey: string }): Promise<FakeSearchApi> {
  return startApi((req, hits, res) => {
    if (req.path !== '/search' || req.method !== 'POST') return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`) return json(res, 401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
    let body: { query?: unknown; max_results?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return json(res, 400, { detail: { error: 'Invalid JSON body' } });
    }
    if (typeof body.query !== 'string' || body.query === '') return json(res, 400, { detail: { error: 'Query is missing.' } });
    const max = typeof body.max_results === 'number' ? body.max_results : 5;
    const results = hits(body.query)
      .slice(0, max)
      .map((h) => ({ title: h.title, url: h.url, content: h.snippet, score: h.score / 10, raw_content: null }));
    json(res, 200, { query: body.query, answer: null, images: [], results, response_time: '0.42', request_id: randomUUID() });
  }, {});
}
