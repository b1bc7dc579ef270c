import type { ModelPrice, Usage } from '@switchboard/agent';

/** One model call's usage as the engine records it, the moment the call completes. */
export interface NewUsageRecord {
  turnId: string;
  sessionId: string;
  /** The principal whose message the turn answers; null for a sender without one. */
  principalId: string | null;
  agentId: string;
  /** The channel account the turn came in on: `<type>:<account>`. */
  channel: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** What the call cost in USD, from the model's price. */
  costUsd: number;
}

/** A stored usage row. */
export interface UsageRecord extends NewUsageRecord {
  id: string;
  createdAt: Date;
  /** The request's size: input + cache read + cache write tokens. */
  contextTokens: number;
}

/** Which usage rows a report sums; every field narrows, absent ones match all. */
export interface UsageFilter {
  principalId?: string;
  agentId?: string;
  channel?: string;
  model?: string;
  /** Rows created at or after this moment. */
  from?: Date;
  /** Rows created before this moment. */
  before?: Date;
}

/** Summed usage: tokens by kind, cost and number of model calls. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUsd: number;
  calls: number;
}

/** What `usage.report` answers: the totals and one entry per UTC day that has rows, oldest first. */
export interface UsageReport {
  totals: UsageTotals;
  days: Array<{ day: string } & UsageTotals>;
}

/**
 * The cost in USD of one call's usage at `price` (USD per million tokens). Cache writes are
 * charged at the 5-minute price: the gateway's breakpoints use the default (5-minute) TTL.
 */
export function usageCost(usage: Usage, price: ModelPrice): number {
  const microUsd =
    usage.inputTokens * price.input +
    usage.outputTokens * price.output +
    usage.cacheReadInputTokens * price.cacheRead +
    usage.cacheCreationInputTokens * price.cacheWrite5m;
  return microUsd / 1_000_000;
}

/** Where a model call happened: the turn, its session, who asked, which agent and channel account. */
export type UsageOrigin = Pick<NewUsageRecord, 'turnId' | 'sessionId' | 'principalId' | 'agentId' | 'channel'>;

/** The usage row of one loop `usage` event at the model's price. */
export function usageRecordOf(ev: { usage: Usage; model: string }, price: ModelPrice, origin: UsageOrigin): NewUsageRecord {
  return {
    ...origin,
    model: ev.model,
    inputTokens: ev.usage.inputTokens,
    outputTokens: ev.usage.outputTokens,
    cacheReadInputTokens: ev.usage.cacheReadInputTokens,
    cacheCreationInputTokens: ev.usage.cacheCreationInputTokens,
    costUsd: usageCost(ev.usage, price),
  };
}
