/** When repeated denials stop a turn and hand it back to a person. */
export interface DenialLimits {
  /** Denials in a row (no allow in between). Default 3. */
  consecutive: number;
  /** Denials in one session. Default 20. */
  total: number;
}

/** Default {@link DenialLimits}: 3 in a row or 20 in a session. */
export const DEFAULT_DENIAL_LIMITS: Readonly<DenialLimits> = Object.freeze({ consecutive: 3, total: 20 });

/** One session's denial counts. */
export interface DenialCounts {
  consecutive: number;
  total: number;
}

/** What recording a decision says. `signal` is set when a limit is reached: stop the turn. */
export interface DenialState extends DenialCounts {
  signal?: 'denial_limit';
  /** Which limit was reached. */
  limit?: 'consecutive' | 'total';
}

/**
 * Counts permission denials per session. {@link recordDenial} signals `denial_limit` when the
 * consecutive or the session limit is reached (and on every denial after it, until
 * {@link reset}); {@link recordAllow} resets the consecutive count. In memory; use
 * {@link snapshot} / {@link restore} to carry counts across restarts.
 */
export class DenialTracker {
  readonly limits: Readonly<DenialLimits>;
  readonly #counts = new Map<string, DenialCounts>();

  /**
   * @param maxSessions sessions whose counts are kept (memory stays bounded on a long-running
   *   gateway; a session idle long enough to be dropped starts again from zero)
   */
  constructor(
    limits: Partial<DenialLimits> = {},
    private readonly maxSessions = 10_000,
  ) {
    this.limits = Object.freeze({ ...DEFAULT_DENIAL_LIMITS, ...limits });
  }

  /** Records a denial for the session; says whether a limit is reached. */
  recordDenial(sessionId: string): DenialState {
    const c = this.#get(sessionId);
    c.consecutive++;
    c.total++;
    return this.#state(c);
  }

  /** Records an allowed call: the consecutive count starts again. */
  recordAllow(sessionId: string): DenialCounts {
    const c = this.#get(sessionId);
    c.consecutive = 0;
    return { consecutive: 0, total: c.total };
  }

  /** A new message from the person: the run of consecutive denials starts again (the total stays). */
  startTurn(sessionId: string): void {
    const c = this.#counts.get(sessionId);
    if (c) c.consecutive = 0;
  }

  /** The session's counts and whether it is at a limit. */
  state(sessionId: string): DenialState {
    return this.#state(this.#counts.get(sessionId) ?? { consecutive: 0, total: 0 });
  }

  /** Forgets the session's counts (a person took over, or the session was reset). */
  reset(sessionId: string): void {
    this.#counts.delete(sessionId);
  }

  /** A copy of the session's counts, for persistence. */
  snapshot(sessionId: string): DenialCounts {
    const c = this.#counts.get(sessionId);
    return { consecutive: c?.consecutive ?? 0, total: c?.total ?? 0 };
  }

  /** Restores counts saved with {@link snapshot}. */
  restore(sessionId: string, counts: DenialCounts): void {
    this.#counts.set(sessionId, { consecutive: counts.consecutive, total: counts.total });
  }

  #get(sessionId: string): DenialCounts {
    let c = this.#counts.get(sessionId);
    if (c) {
      // Most recently used last, so the bound below drops the sessions idle the longest.
      this.#counts.delete(sessionId);
    } else {
      c = { consecutive: 0, total: 0 };
    }
    this.#counts.set(sessionId, c);
    while (this.#counts.size > this.maxSessions) this.#counts.delete(this.#counts.keys().next().value!);
    return c;
  }

  #state(c: DenialCounts): DenialState {
    const state: DenialState = { consecutive: c.consecutive, total: c.total };
    if (c.consecutive >= this.limits.consecutive) {
      state.signal = 'denial_limit';
      state.limit = 'consecutive';
    } else if (c.total >= this.limits.total) {
      state.signal = 'denial_limit';
      state.limit = 'total';
    }
    return state;
  }
}
