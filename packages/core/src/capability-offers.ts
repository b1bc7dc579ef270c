import { SwbError, SwbErrorCode } from '@switchboard/agent';
import type { PermissionScope } from './permissions/scopes.js';
import { ROLES, type OfferSwitch, type Role } from './storage.js';

/**
 * Built-in `offeredTo` defaults: the roles a tool is offered to when neither the config
 * (`capabilities.offeredTo`) nor an operator's offer-switch says otherwise. A tool not listed
 * here is offered to every role. `exec` (a shell) is for owners and admins only: members and
 * guests get it only where an operator switches it on.
 */
export const DEFAULT_OFFERED_TO: ReadonlyMap<string, readonly Role[]> = new Map([['exec', ['owner', 'admin']]]);

/** Every role: the `offeredTo` of a tool without a default or an override. */
export const ALL_ROLES: readonly Role[] = ROLES;

/** A `capabilities.offeredTo` entry that names no registered tool (a start-up error). */
export class OfferedToError extends SwbError {
  constructor(
    /** The tool name as configured. */
    readonly tool: string,
    message: string,
  ) {
    super(SwbErrorCode.Config, message);
    this.name = 'OfferedToError';
  }
}

/** An offer-switch as the pre-filter reads it: the tool, and the scope where it is offered. */
export interface OfferScope {
  tool: string;
  scope: PermissionScope;
}

/** A stored offer-switch as an {@link OfferScope} (a null id is the gateway's). */
export function offerScopeOf(offer: Pick<OfferSwitch, 'tool' | 'scopeKind' | 'scopeId'>): OfferScope {
  return { tool: offer.tool, scope: offer.scopeId === null ? { kind: offer.scopeKind } : { kind: offer.scopeKind, id: offer.scopeId } };
}

/** What the pre-filter needs to tell whether a tool is offered to the speaker of a turn. */
export interface OfferContext {
  /** The speaker's role (`guest` without a principal). */
  role: string;
  /** The roles a tool is offered to by default (the registry's {@link CapabilityRegistry.offeredTo}). */
  offeredTo(tool: string): readonly string[];
  /** The operators' offer-switches in force. */
  switches: readonly OfferScope[];
}

/** Whether `offeredTo` leaves some role out (then enabling the tool at a scope stores an offer-switch). */
export function coversEveryRole(offeredTo: readonly string[]): boolean {
  return ALL_ROLES.every((role) => offeredTo.includes(role));
}
