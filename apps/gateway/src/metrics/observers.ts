import type { AfterTool, CanUseTool, ModelClient, ModelRequest, ModelResponse, ModelSpecLookup, ModelStreamEvent } from '@switchboard/agent';
import { type TurnPolicy, usageCost } from '@switchboard/core';
import type { GatewayMetrics } from './gateway-metrics.js';

/** What {@link timedModelClient} tells about each model request (the metrics, the console's live feed). */
export type ModelCallObserver = Pick<GatewayMetrics, 'modelCall'>;

/**
 * The model client with every streamed request timed and its usage counted (tokens and cost by
 * requested model, at the model's configured price). Summary calls of compaction go through the
 * same client, so they are counted like the loop's calls. `countTokens` passes through untimed.
 * The model label is the request's model (a configured name), never the name the API answers with.
 */
export function timedModelClient(inner: ModelClient, metrics: ModelCallObserver, spec: ModelSpecLookup): ModelClient {
  const timed: ModelClient = {
    async *stream(req: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent, ModelResponse, void> {
      const started = performance.now();
      let response: ModelResponse | undefined;
      try {
        response = yield* inner.stream(req, signal);
        return response;
      } finally {
        const seconds = (performance.now() - started) / 1000;
        const answered = response ? { tokens: response.usage, costUsd: usageCost(response.usage, spec(req.model).price) } : null;
        metrics.modelCall(req.model, seconds, answered);
      }
    },
  };
  if (inner.countTokens) timed.countTokens = (req, signal) => inner.countTokens!(req, signal);
  return timed;
}

/**
 * A turn's policy with its tool calls counted: a denial when the permission decision refuses one
 * (by the denial's kind), ok or error once an allowed call ran (its result's `is_error`). The
 * tool label is the registry tool's name. Uses refused before the decision (an unknown tool,
 * invalid input) never reach either and are not counted. Decisions and results are passed on unchanged.
 */
export function watchedPolicy(policy: TurnPolicy, metrics: GatewayMetrics): TurnPolicy {
  const canUseTool: CanUseTool = async (tool, input, ctx) => {
    const decision = await policy.canUseTool(tool, input, ctx);
    if (decision.behavior === 'deny') metrics.toolCall(tool.name, 'denied', decision.kind);
    return decision;
  };
  const inner = policy.afterTool;
  const afterTool: AfterTool = async (call) => {
    metrics.toolCall(call.tool.name, call.result.is_error ? 'error' : 'ok');
    return inner ? inner(call) : undefined;
  };
  return { ...policy, canUseTool, afterTool };
}
