import { type BoundaryPolicy, type BoundarySettings, type PairingSettings, resolveBoundaryPolicy } from '@switchboard/core';
import type { Config } from './config.js';

/**
 * The boundary's settings from a config: each configured channel account's base policy, keyed
 * by channel id (`<type>:<account>`), missing fields at their defaults. Built at start and again
 * after every reload that changed something (the gateway hands it to `BoundaryService.update`).
 */
export function boundarySettings(config: Readonly<Config>): BoundarySettings {
  const accounts = new Map<string, BoundaryPolicy>();
  for (const [type, section] of Object.entries(config.channels)) {
    if (!section) continue;
    for (const [account, fields] of Object.entries(section.accounts)) accounts.set(`${type}:${account}`, resolveBoundaryPolicy(fields));
  }
  return { accounts };
}

/** The pairing limits of a config (they need a restart to change). */
export function pairingSettings(config: Readonly<Config>): PairingSettings {
  const { codeTtl, maxPending, maxHeld, maxHeldBytes, cooldown, sweepInterval } = config.pairing;
  return { codeTtl, maxPending, maxHeld, maxHeldBytes, cooldown, sweepInterval };
}
