import { describe, expect, it } from 'vitest';
import { configSecrets } from '../src/config.js';
import { webFetchSettingsOf, webSearchSettingsOf } from '../src/config-web.js';
import { parseTestConfig as parse } from './config-fixture.js';

describe('tools.webFetch', () => {
  it('defaults: no private target, 30 s, 5 MiB, 50 000 characters, 5 redirects', () => {
    const cfg = parse('{}');
    expect(webFetchSettingsOf(cfg.tools.webFetch)).toEqual({
      allowPrivate: [],
      timeoutMs: 30_000,
      maxBytes: 5 * 1024 * 1024,
      maxChars: 50_000,
      maxRedirects: 5,
    });
  });

  it('takes exact host:port entries and durations', () => {
    const cfg = parse('{ tools: { webFetch: { allowPrivate: ["127.0.0.1:8080", "[::1]:9000", "wiki.lan:443"], timeout: "2s", maxRedirects: 0 } } }');
    expect(webFetchSettingsOf(cfg.tools.webFetch)).toMatchObject({
      allowPrivate: ['127.0.0.1:8080', '[::1]:9000', 'wiki.lan:443'],
      timeoutMs: 2000,
      maxRedirects: 0,
    });
  });

  it.each([
    ['{ tools: { webFetch: { allowPrivate: ["localhost"] } } }', /tools\.webFetch\.allowPrivate\.0: expected an exact host:port/],
    ['{ tools: { webFetch: { allowPrivate: ["10.0.0.0/8:80"] } } }', /allowPrivate\.0/],
    ['{ tools: { webFetch: { timeout: "100ms" } } }', /tools\.webFetch\.timeout: must be at least 200ms/],
    ['{ tools: { webFetch: { maxRedirects: 6 } } }', /tools\.webFetch\.maxRedirects/],
    ['{ tools: { webFetch: { follow: true } } }', /follow/],
  ])('refuses %s', (text, message) => {
    expect(() => parse(text)).toThrow(message);
  });
});

describe('tools.webSearch', () => {
  it('is off without a provider', () => {
    expect(webSearchSettingsOf(parse('{}').tools.webSearch)).toBeUndefined();
  });

  it('resolves SearXNG with its base URL, and the hosted APIs with their public one by default', () => {
    expect(webSearchSettingsOf(parse('{ tools: { webSearch: { provider: "searxng", baseUrl: "http://127.0.0.1:8888" } } }').tools.webSearch)).toEqual({
      provider: 'searxng',
      baseUrl: 'http://127.0.0.1:8888',
      maxResults: 5,
      timeoutMs: 15_000,
    });
    const brave = parse('{ tools: { webSearch: { provider: "brave", apiKey: "bk-secret-123", maxResults: 10 } } }');
    expect(webSearchSettingsOf(brave.tools.webSearch)).toMatchObject({
      provider: 'brave',
      baseUrl: 'https://api.search.brave.com',
      apiKey: 'bk-secret-123',
      maxResults: 10,
    });
    expect(configSecrets(brave)).toContain('bk-secret-123');
    const tavily = parse('{ tools: { webSearch: { provider: "tavily", apiKey: "tvly-abc" } } }');
    expect(webSearchSettingsOf(tavily.tools.webSearch)).toMatchObject({ baseUrl: 'https://api.tavily.com' });
  });

  it.each([
    ['{ tools: { webSearch: { provider: "searxng" } } }', /tools\.webSearch\.baseUrl: is required for provider "searxng"/],
    ['{ tools: { webSearch: { provider: "brave" } } }', /tools\.webSearch\.apiKey: is required for provider "brave"/],
    ['{ tools: { webSearch: { provider: "google", apiKey: "k" } } }', /tools\.webSearch\.provider/],
    ['{ tools: { webSearch: { provider: "searxng", baseUrl: "ftp://x" } } }', /tools\.webSearch\.baseUrl/],
    ['{ tools: { webSearch: { provider: "tavily", apiKey: "k", maxResults: 21 } } }', /tools\.webSearch\.maxResults/],
  ])('refuses %s', (text, message) => {
    expect(() => parse(text)).toThrow(message);
  });
});
