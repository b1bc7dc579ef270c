import { OfferedToError, type CapabilityRegistry, type Role } from '@switchboard/core';
import type { Config } from '../config.js';
import { StartupError } from '../startup-errors.js';

/** `capabilities.offeredTo` as the registry takes it: tool name → roles (own entries only). */
export function offeredToOf(cfg: Readonly<Config>): ReadonlyMap<string, readonly Role[]> {
  return new Map(Object.entries(cfg.capabilities.offeredTo));
}

/** Builds the registry; a `capabilities.offeredTo` entry naming no registered tool is a start-up error naming the key. */
export function withOfferedToKey(build: () => CapabilityRegistry): CapabilityRegistry {
  try {
    return build();
  } catch (err) {
    if (err instanceof OfferedToError) throw new StartupError(err.message, `capabilities.offeredTo.${err.tool}`);
    throw err;
  }
}
