import type { UpgradeRefusal } from './upgrades.js';

/** Caps on one account's connections that have not authenticated yet. */
export interface UnauthenticatedLimits {
  account: string;
  /** Per client address key (IPv6 aggregated by /64). */
  perAddress: number;
  /** Over all addresses. */
  total: number;
}

/**
 * Counts an account's unauthenticated connections per client address and in all. A slot is
 * reserved before the handshake and released exactly once: when the connection authenticates
 * or when its socket closes, whichever comes first.
 */
export class UnauthenticatedCaps {
  private total = 0;
  private readonly perAddress = new Map<string, number>();

  constructor(private readonly limits: UnauthenticatedLimits) {}

  /** Reserves a slot for `address`: the release function, or the refusal naming the config key. */
  reserve(address: string): (() => void) | UpgradeRefusal {
    const key = `channels.websocket.accounts.${this.limits.account}`;
    const mine = this.perAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress) {
      return {
        status: 429,
        code: 'too_many_unauthenticated',
        message: `Too many unauthenticated connections from this address (${key}.maxUnauthenticatedPerAddress = ${this.limits.perAddress}): authenticate the open ones, or send the token in the Authorization header.`,
      };
    }
    if (this.total >= this.limits.total) {
      return {
        status: 503,
        code: 'too_many_unauthenticated',
        message: `Too many unauthenticated connections (${key}.maxUnauthenticated = ${this.limits.total}); retry shortly, or send the token in the Authorization header.`,
        headers: { 'retry-after': '5' },
      };
    }
    this.perAddress.set(address, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, n);
    };
  }

  /** Unauthenticated connections open now. */
  get size(): number {
    return this.total;
  }
}
