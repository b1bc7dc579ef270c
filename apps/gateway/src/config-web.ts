import { duration } from '@switchboard/core';
import { parseHostPort, SEARCH_BASE_URLS, WEB_FETCH_DEFAULTS, type WebFetchSettings, type WebSearchSettings } from '@switchboard/tools';
import { z } from 'zod';

const MIB = 1024 * 1024;

/** `tools.webFetch` (docs/web.md, docs/configuration.md#tools). */
export const webFetchSchema = z
  .strictObject({
    /** Exact `host:port` targets that may be private, loopback or link-local (`"127.0.0.1:8080"`, `"wiki.lan:443"`). Never a default. */
    allowPrivate: z
      .array(z.string().refine((s) => parseHostPort(s) !== undefined, 'expected an exact host:port such as "127.0.0.1:8080" or "[::1]:8080"'))
      .max(100)
      .default([]),
    /** The whole fetch, redirects and body included. */
    timeout: duration.refine((ms) => ms >= 200, 'must be at least 200ms').default(WEB_FETCH_DEFAULTS.timeoutMs),
    /** Bytes of body read at most; the rest is cut. */
    maxBytes: z
      .number()
      .int()
      .min(1024)
      .max(100 * MIB)
      .default(WEB_FETCH_DEFAULTS.maxBytes),
    /** Characters of readable text returned at most. */
    maxChars: z.number().int().min(1000).max(1_000_000).default(WEB_FETCH_DEFAULTS.maxChars),
    /** Redirects followed at most (each checked again). */
    maxRedirects: z.number().int().min(0).max(5).default(WEB_FETCH_DEFAULTS.maxRedirects),
  })
  .prefault({});

/** `tools.webSearch`: off (no `web_search` tool) until `provider` is set. */
export const webSearchSchema = z
  .strictObject({
    provider: z.enum(['searxng', 'brave', 'tavily']).optional(),
    /** The API's base URL: required for `searxng` (your instance), the public API by default for `brave` and `tavily`. */
    baseUrl: z.url({ protocol: /^https?$/u }).optional(),
    /** The API key of `brave` or `tavily` (a secret: scrubbed from logs; use `${ENV}`). */
    apiKey: z.string().min(1).optional(),
    /** Results returned at most. */
    maxResults: z.number().int().min(1).max(20).default(5),
    timeout: duration.refine((ms) => ms >= 200, 'must be at least 200ms').default(15_000),
  })
  .superRefine((v, ctx) => {
    if (v.provider === 'searxng' && v.baseUrl === undefined)
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'is required for provider "searxng" (your instance)' });
    if ((v.provider === 'brave' || v.provider === 'tavily') && v.apiKey === undefined) {
      ctx.addIssue({ code: 'custom', path: ['apiKey'], message: `is required for provider "${v.provider}"` });
    }
  })
  .prefault({});

type WebFetchConfig = z.output<typeof webFetchSchema>;
type WebSearchConfig = z.output<typeof webSearchSchema>;

/** The resolved settings of `web_fetch`. */
export function webFetchSettingsOf(cfg: WebFetchConfig): WebFetchSettings {
  return { allowPrivate: cfg.allowPrivate, timeoutMs: cfg.timeout, maxBytes: cfg.maxBytes, maxChars: cfg.maxChars, maxRedirects: cfg.maxRedirects };
}

/** The resolved settings of `web_search`, or undefined when no provider is configured (the tool is then not offered). */
export function webSearchSettingsOf(cfg: WebSearchConfig): WebSearchSettings | undefined {
  if (cfg.provider === undefined) return undefined;
  const baseUrl = cfg.baseUrl ?? (cfg.provider === 'searxng' ? '' : SEARCH_BASE_URLS[cfg.provider]);
  return { provider: cfg.provider, baseUrl, ...(cfg.apiKey !== undefined ? { apiKey: cfg.apiKey } : {}), maxResults: cfg.maxResults, timeoutMs: cfg.timeout };
}
