import type { ApprovalActivity, PairingActivity, TurnEndFacts } from '@switchboard/core';

/** What the gateway tells the console's live stream; the stream filters it per viewer. */
export type FeedEvent =
  | { type: 'approval'; activity: ApprovalActivity }
  | { type: 'pairing'; activity: PairingActivity }
  | { type: 'turn.ended'; channel: string; account: string; outcome: string; durationMs: number };

/** The rolling figures of a `stats` event. */
export interface FeedStats {
  /** Turns that ended in the last 60 s. */
  turnsPerMinute: number;
  /** Model requests in the last 5 minutes: latency percentiles (ms; null without any), errors and count. */
  modelLatencyMs: { p50: number | null; p95: number | null };
  modelErrors: number;
  modelCalls: number;
}

const MINUTE_MS = 60_000;
const MODEL_WINDOW_MS = 5 * MINUTE_MS;
// Bounds memory however busy the gateway is: the windows keep at most this many samples each.
const MAX_SAMPLES = 5000;

/** The `q` quantile (0..1) of sorted values, nearest-rank. */
function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * The console's live feed: approvals and pairing codes as the broker and the boundary report them,
 * turn ends and model calls as the engine reports them (the same observers as the Prometheus
 * metrics, which may be off), with rolling windows for the `stats` event. Listeners must not throw.
 */
export class LiveFeed {
  private readonly listeners = new Set<(e: FeedEvent) => void>();
  private turnEnds: number[] = [];
  private calls: Array<{ at: number; ms: number; ok: boolean }> = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Subscribes; returns the unsubscribe. */
  on(listener: (e: FeedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Listeners now (the stream ticks only while someone listens). */
  get listening(): number {
    return this.listeners.size;
  }

  /** `ApprovalBrokerOptions.onActivity`. */
  readonly approval = (activity: ApprovalActivity): void => this.emit({ type: 'approval', activity });

  /** `BoundaryServiceOptions.onPairing`. */
  readonly pairing = (activity: PairingActivity): void => this.emit({ type: 'pairing', activity });

  /** `EngineOptions.onTurnEnd`. */
  readonly turnEnded = (end: TurnEndFacts): void => {
    this.turnEnds.push(this.now());
    if (this.turnEnds.length > MAX_SAMPLES) this.turnEnds = this.turnEnds.slice(-MAX_SAMPLES);
    this.emit({ type: 'turn.ended', channel: end.channel, account: end.account, outcome: end.reason, durationMs: end.durationMs });
  };

  /** One model request ended (the timed model client's observer). */
  modelCall(_model: string, seconds: number, answered: unknown): void {
    this.calls.push({ at: this.now(), ms: Math.round(seconds * 1000), ok: answered !== null });
    if (this.calls.length > MAX_SAMPLES) this.calls = this.calls.slice(-MAX_SAMPLES);
  }

  /** The rolling figures now. */
  stats(): FeedStats {
    const now = this.now();
    this.turnEnds = this.turnEnds.filter((t) => t > now - MINUTE_MS);
    this.calls = this.calls.filter((c) => c.at > now - MODEL_WINDOW_MS);
    const ok = this.calls
      .filter((c) => c.ok)
      .map((c) => c.ms)
      .sort((a, b) => a - b);
    return {
      turnsPerMinute: this.turnEnds.length,
      modelLatencyMs: { p50: quantile(ok, 0.5), p95: quantile(ok, 0.95) },
      modelErrors: this.calls.filter((c) => !c.ok).length,
      modelCalls: this.calls.length,
    };
  }

  private emit(e: FeedEvent): void {
    for (const l of this.listeners) l(e);
  }
}
