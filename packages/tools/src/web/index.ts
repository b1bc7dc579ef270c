import type { AnyTool } from '@switchboard/agent';
import type { GuardDeps } from './guarded-fetch.js';
import { createWebFetchTool, type WebFetchSettings } from './web-fetch-tool.js';
import { createWebSearchTool, type WebSearchSettings } from './web-search-tool.js';

export { bareHost, blockedRange, effectivePort, hostPortKey, parseHostPort } from './address-policy.js';
export {
  checkTarget,
  checkUrl,
  type Connector,
  type FetchedPage,
  type GuardDeps,
  type GuardSettings,
  guardedFetch,
  type PinnedTarget,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
  WebFetchError,
} from './guarded-fetch.js';
export { decodeBody, mediaTypeOf, type ReadableContent, readableContent } from './web-content.js';
export { createWebFetchTool, WEB_FETCH_DEFAULTS, type WebFetchInput, type WebFetchSettings } from './web-fetch-tool.js';
export {
  createSearchProvider,
  SEARCH_BASE_URLS,
  SearchError,
  type SearchProvider,
  type SearchProviderSettings,
  type SearchResult,
} from './search-providers.js';
export { createWebSearchTool, type WebSearchInput, type WebSearchSettings } from './web-search-tool.js';

/** The web tools: `web_fetch` always, `web_search` only when a provider is configured. */
export function createWebTools(settings: { fetch: WebFetchSettings; search?: WebSearchSettings | undefined }, deps: GuardDeps = {}): AnyTool[] {
  const tools = [createWebFetchTool(settings.fetch, deps) as AnyTool];
  if (settings.search) tools.push(createWebSearchTool(settings.search) as AnyTool);
  return tools;
}
