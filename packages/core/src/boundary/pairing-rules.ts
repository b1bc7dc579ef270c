import type { InboundMessage } from '../channel.js';
import type { Principal, Role, Scope } from '../storage.js';

const RANK: Record<Role, number> = { guest: 0, member: 1, admin: 2, owner: 3 };

/** What an approval asks for, and who asks. */
export interface ApprovalAsk {
  role?: Role | undefined;
  principalId?: string | undefined;
  /** The approving operator token's scopes. */
  scopes: readonly Scope[];
}

/**
 * Who may approve a pairing request into what (docs/security.md, "Pairing"):
 * - linking to an existing principal (`principalId`) needs the `admin` scope, and is refused for
 *   an owner whatever the scope — pairing never hands someone an owner's identity;
 * - a new principal gets the account's `pairingRole` unless `role` says otherwise; without the
 *   `admin` scope `role` may only be `pairingRole` or below, and never `owner`.
 * Returns the refusal's message, or null when allowed.
 */
export function approvalRefusal(ask: ApprovalAsk, pairingRole: Role, target: Principal | null): string | null {
  const admin = ask.scopes.includes('admin');
  if (ask.principalId !== undefined) {
    if (!admin) return 'Linking a pairing request to an existing principal ("principalId") needs an operator token with the "admin" scope.';
    if (target?.role === 'owner') {
      return 'A pairing request cannot be linked to an owner ("principalId" names an owner). Approve it as a new principal, or link the identity through the principals API.';
    }
    return null;
  }
  if (!admin && (ask.role ?? pairingRole) === 'owner') return 'Only an operator with the "admin" scope may grant the owner role.';
  if (ask.role !== undefined && !admin && RANK[ask.role] > RANK[pairingRole]) {
    return `Role "${ask.role}" is above this account's pairingRole "${pairingRole}"; granting it needs an operator token with the "admin" scope.`;
  }
  return null;
}

/** The held messages of a request as one message: their texts in order, the last one's address. */
export function combineHeld(code: string, held: InboundMessage[]): InboundMessage | null {
  const last = held.at(-1);
  if (!last) return null;
  return { ...last, dedupeKey: `pairing:${code}`, text: held.map((m) => m.text).join('\n\n') };
}

/** "12 min" / "40 s" for a span in milliseconds. */
export function span(ms: number): string {
  const s = Math.max(1, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}
