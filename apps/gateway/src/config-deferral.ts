import type { DeferralSettings } from '@switchboard/core';
import { z } from 'zod';

/** `tools.deferral`: deferred tool schemas and `tool_search` (docs/tools.md, docs/configuration.md#tools). */
export const deferralSchema = z
  .strictObject({
    /** Off: every offered tool's schema goes out on every call and `tool_search` is not offered. */
    enabled: z.boolean().default(true),
    /** Defer deferrable (MCP) tools once their schemas add up to more than this many bytes of JSON… */
    maxSchemaBytes: z.number().int().min(0).max(10_000_000).default(8192),
    /** …or once more than this many deferrable tools are offered. */
    maxTools: z.number().int().min(0).max(10_000).default(20),
    /** Tools one `tool_search` call loads at most, unless the call asks for fewer or more (up to 20). */
    maxResults: z.number().int().min(1).max(20).default(5),
  })
  .prefault({});

export type DeferralConfig = z.output<typeof deferralSchema>;

/** `tools.deferral` as the engine takes it. */
export function deferralSettings(config: DeferralConfig): DeferralSettings {
  return { enabled: config.enabled, maxSchemaBytes: config.maxSchemaBytes, maxTools: config.maxTools, maxResults: config.maxResults };
}
