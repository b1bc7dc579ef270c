import type { Message, ModelClient, SystemBlock, TokenEstimator, ToolSpec } from '@switchboard/agent';

/** Default of `context.countTokens.margin`: the exact count is asked within ±10 % of a threshold. */
export const DEFAULT_COUNT_MARGIN = 0.1;

/** How a turn's meter asks the API for exact token counts (resolved values). */
export interface ExactCounting {
  /** The client asked; one without `countTokens` gives no exact counts (the estimate stands). */
  client: ModelClient;
  /** The model the turn's requests go to (as sent to the API). */
  model: string;
  /** `max_tokens` of the turn's requests (part of `ModelRequest`; count_tokens does not send it). */
  maxTokens: number;
  /** Fraction of a threshold: an estimate within `threshold × (1 ± margin)` is checked by an exact count. */
  margin: number;
  /** Told when a count failed or timed out (the estimate is used instead); must not throw. */
  onFailure?(err: unknown): void;
}

/** The narrowest band a calibrated meter checks: ±2 % of a threshold. */
export const MIN_COUNT_MARGIN = 0.02;

/**
 * The band around a threshold inside which an estimate is checked by an exact count: the
 * configured `margin` until the estimator has been calibrated, then three times its recent
 * relative error — at least {@link MIN_COUNT_MARGIN}, at most `margin`. A well-calibrated
 * estimate is trusted further from the threshold, so a session growing through the band costs
 * a few counts instead of one per call.
 */
export function countMargin(margin: number, relativeError: number | undefined): number {
  if (relativeError === undefined || !Number.isFinite(relativeError)) return margin;
  return Math.min(margin, Math.max(MIN_COUNT_MARGIN, 3 * relativeError));
}

/** Whether `estimate` is close enough to `threshold` that its error could change the decision. */
export function nearThreshold(estimate: number, threshold: number, margin: number): boolean {
  if (!Number.isFinite(threshold) || threshold <= 0 || !Number.isFinite(margin) || margin < 0) return false;
  return Math.abs(estimate - threshold) <= margin * threshold;
}

/**
 * The exact counts of one turn: asks `countTokens` for a request (the turn's system prompt and
 * tools plus the given messages) at most once per identical request — keyed by message count
 * and characters, so two shapers asking about the same send share one call, in flight or done —
 * and feeds every count into the estimator (a perfect calibration point). A failed count is
 * remembered as failed for that request, so it is not retried within the turn.
 */
export class ExactCounter {
  private readonly counts = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly counting: ExactCounting,
    private readonly system: readonly SystemBlock[],
    private readonly tools: readonly ToolSpec[],
    private readonly estimator: TokenEstimator,
  ) {}

  /** Whether the client can count at all. */
  get available(): boolean {
    return typeof this.counting.client.countTokens === 'function';
  }

  /** The exact tokens of the request sending `messages` (`chars` of it as the estimator measures), or undefined when the count failed. */
  count(messages: readonly Message[], chars: number, signal: AbortSignal): Promise<number | undefined> {
    const key = `${messages.length}:${chars}`;
    let pending = this.counts.get(key);
    if (!pending) {
      pending = this.ask(messages, chars, signal);
      this.counts.set(key, pending);
    }
    return pending;
  }

  private async ask(messages: readonly Message[], chars: number, signal: AbortSignal): Promise<number | undefined> {
    const { client, model, maxTokens } = this.counting;
    try {
      if (!client.countTokens) return undefined;
      const tokens = await client.countTokens({ model, maxTokens, system: [...this.system], tools: [...this.tools], messages: [...messages] }, signal);
      if (typeof tokens !== 'number' || !Number.isFinite(tokens) || tokens < 0) throw new Error('the token count is not a number');
      this.estimator.observe(chars, tokens);
      return tokens;
    } catch (err) {
      try {
        this.counting.onFailure?.(err);
      } catch {
        // a failing logger must not fail the measure
      }
      return undefined;
    }
  }
}

/** `context.countTokens` as the engine takes it (resolved). */
export interface CountTokensSettings {
  /** Ask the API for exact counts near thresholds (default true). */
  enabled: boolean;
  /** See {@link ExactCounting.margin} (default {@link DEFAULT_COUNT_MARGIN}). */
  margin: number;
}

/** The counting of one turn's meter from the engine's settings; undefined when counting is off. */
export function turnCounting(
  settings: CountTokensSettings | undefined,
  client: ModelClient,
  model: string,
  maxTokens: number,
  debug: (fields: Record<string, unknown>, message: string) => void,
): ExactCounting | undefined {
  const { enabled, margin } = settings ?? { enabled: true, margin: DEFAULT_COUNT_MARGIN };
  if (!enabled) return undefined;
  return {
    client,
    model,
    maxTokens,
    margin,
    onFailure: (err) => debug({ kind: failureKind(err) }, 'token count failed; the estimate is used'),
  };
}

function failureKind(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'kind' in err && typeof err.kind === 'string') return err.kind;
  return 'unknown';
}
