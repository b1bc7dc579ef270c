import type { PairingLimits } from '../storage.js';
import type { BoundaryPolicy } from './policy.js';

/**
 * What the boundary reads from the config, resolved once at the edge (the gateway's wiring) and
 * replaced as a whole after a reload (`BoundaryService.update`): nothing below it sees the config.
 */
export interface BoundarySettings {
  /**
   * The base (config) policy of every configured channel account, keyed by channel id
   * (`<type>:<account>`). Operators' overrides are applied on top by the service; an id that is
   * not in the map is an unknown account (no policy; its messages meet {@link LOCKED_DOWN_POLICY}).
   */
  accounts: ReadonlyMap<string, BoundaryPolicy>;
}

/** The pairing limits (config `pairing.*`, milliseconds for durations); fixed while the gateway runs. */
export interface PairingSettings extends PairingLimits {
  /** How long a pairing code stays valid. */
  codeTtl: number;
  /** How often expired codes are swept (and their senders told). */
  sweepInterval: number;
}

/** The rate limit of an account that sets none (config default). */
export const DEFAULT_RATE_LIMIT: Readonly<BoundaryPolicy['rateLimit']> = Object.freeze({ burst: 10, perMinute: 20 });

/** The boundary fields as a channel account's config may give them: any may be missing (WebSocket accounts set only two). */
export type BoundaryFieldsInput = { [K in keyof BoundaryPolicy]?: BoundaryPolicy[K] | undefined };

/** A channel account's base policy from its config fields, each missing one at its default. */
export function resolveBoundaryPolicy(fields: BoundaryFieldsInput): BoundaryPolicy {
  return {
    dmPolicy: fields.dmPolicy ?? 'pairing',
    allowFrom: fields.allowFrom ?? [],
    groupPolicy: fields.groupPolicy ?? 'allowlist',
    groups: fields.groups ?? {},
    requireMention: fields.requireMention ?? true,
    rateLimit: fields.rateLimit ?? DEFAULT_RATE_LIMIT,
    pairingRole: fields.pairingRole ?? 'member',
    permissionMode: fields.permissionMode ?? null,
  };
}

/** The policy a message from an unknown channel account meets: no DMs, no rooms. */
export const LOCKED_DOWN_POLICY: Readonly<BoundaryPolicy> = Object.freeze({
  dmPolicy: 'allowlist',
  allowFrom: [],
  groupPolicy: 'disabled',
  groups: {},
  requireMention: true,
  rateLimit: DEFAULT_RATE_LIMIT,
  pairingRole: 'member',
  permissionMode: null,
});
