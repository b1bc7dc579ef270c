import type { Role } from './storage.js';

/**
 * A change to who may act as whom, announced the moment it happens so that open connections
 * (WebSocket sockets, later the console's web sessions) can be cut at once instead of at their
 * next request.
 */
export type AccessChange =
  | { type: 'token_revoked'; tokenId: string }
  | { type: 'token_expired'; tokenId: string }
  | { type: 'principal_removed'; principalId: string }
  | { type: 'principal_demoted'; principalId: string; from: Role; to: Role }
  /** A console session ended (signed out, expired, or its token revoked): the web chat sockets it opened close. */
  | { type: 'console_session_ended'; sessionId: string };

/** Called for every {@link AccessChange}; it must not throw (a throw is reported and ignored). */
export type AccessListener = (change: AccessChange) => void;

/**
 * The in-process bus of access changes: the control API publishes, channels subscribe.
 * Delivery is synchronous, so by the time the publishing request answers, every listener has
 * acted. One failing listener never stops the others.
 */
export class AccessEvents {
  private readonly listeners = new Set<AccessListener>();

  constructor(private readonly onListenerError: (err: unknown, change: AccessChange) => void = () => {}) {}

  /** Subscribes; returns the function that unsubscribes. */
  on(listener: AccessListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Announces a change to every subscriber. */
  emit(change: AccessChange): void {
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch (err) {
        this.onListenerError(err, change);
      }
    }
  }
}

const RANK: Readonly<Record<Role, number>> = { owner: 3, admin: 2, member: 1, guest: 0 };

/** Whether a role change from `from` to `to` takes authority away. */
export function isDemotion(from: Role, to: Role): boolean {
  return RANK[to] < RANK[from];
}
