import {
  countedInputTokens,
  messagesChars,
  requestChars,
  type Message,
  type ModelSpec,
  type RequestShaper,
  type SystemBlock,
  TokenEstimator,
  type ToolSpec,
  type Usage,
} from '@switchboard/agent';
import { countMargin, ExactCounter, type ExactCounting, nearThreshold } from './exact-count.js';

/**
 * How big one turn's requests are, in tokens: the turn's system prompt and tool schemas are fixed,
 * so a request is measured by its messages. Thresholds are fractions of {@link ContextMeter.window}.
 */
export interface ContextMeter {
  /** The model's whole context window (input and output). */
  readonly contextWindow: number;
  /** `W = contextWindow − outputReserve`: what a request may fill; the shapers' thresholds are fractions of it. */
  readonly window: number;
  /** Estimated tokens of the request that sends `messages` (system prompt and tools included). */
  estimate(messages: readonly Message[]): number;
  /**
   * Tokens of that request for a decision against `threshold`: the estimate, or the API's exact
   * count when the estimate is close enough to the threshold that the estimate's error matters.
   * Never throws (a failed count falls back to the estimate).
   */
  measure(messages: readonly Message[], threshold: number, signal: AbortSignal): Promise<number>;
  /** Corrects the estimate from a completed call: what it sent and what the API counted. */
  observe(sent: readonly Message[], usage: Usage): void;
}

/** The calibrated estimators of an engine, one per model (the ratio differs by tokenizer), shared by all turns. */
export class TokenEstimators {
  private readonly byModel = new Map<string, TokenEstimator>();

  /** The estimator of `model`, created on first use. */
  of(model: string): TokenEstimator {
    let estimator = this.byModel.get(model);
    if (!estimator) {
      estimator = new TokenEstimator();
      this.byModel.set(model, estimator);
    }
    return estimator;
  }
}

/**
 * The meter of one turn on `spec`'s model, with its fixed prefix (system prompt and tools).
 * With `counting` (and a client that has `countTokens`), `measure` asks for the exact count when
 * the estimate is within {@link countMargin} of the threshold — `counting.margin` until the
 * estimator is calibrated, then narrower (see {@link ExactCounter}).
 */
export function contextMeter(
  spec: ModelSpec,
  estimator: TokenEstimator,
  system: readonly SystemBlock[],
  tools: readonly ToolSpec[],
  counting?: ExactCounting,
): ContextMeter {
  const prefixChars = requestChars(system, tools, []);
  const chars = (messages: readonly Message[]) => prefixChars + messagesChars(messages);
  const counter = counting ? new ExactCounter(counting, system, tools, estimator) : undefined;
  return {
    contextWindow: spec.contextWindow,
    window: Math.max(1, spec.contextWindow - spec.outputReserve),
    estimate: (messages) => estimator.tokens(chars(messages)),
    measure: async (messages, threshold, signal) => {
      const size = chars(messages);
      const estimate = estimator.tokens(size);
      if (!counting || !counter?.available || !nearThreshold(estimate, threshold, countMargin(counting.margin, estimator.relativeError))) return estimate;
      return (await counter.count(messages, size, signal)) ?? estimate;
    },
    observe: (sent, usage) => estimator.observe(chars(sent), countedInputTokens(usage)),
  };
}

/** The first shaper of every chain: sends what it is given and calibrates the meter from every completed call. */
export function meterShaper(meter: ContextMeter): RequestShaper {
  return {
    shape: async (_history, send) => ({ send: [...send] }),
    observe: (sent, usage) => meter.observe(sent, usage),
  };
}
