import type { ScriptedModel } from '@switchboard/testkit';
import { type AgentEvent, type AnyTool, allowAll, type QueryParams, type QueryResult, query } from '../src/index.js';

/** The loop's parameters for a test: one user "hi", everything allowed, no waiting; `extra` overrides. */
export function loopParams(model: ScriptedModel, tools: AnyTool[], extra: Partial<QueryParams> = {}): QueryParams {
  return {
    model,
    modelName: 'm',
    maxTokens: 100,
    system: [{ type: 'text', text: 'sys' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools,
    canUseTool: allowAll,
    signal: new AbortController().signal,
    maxTurns: 10,
    toolContext: { sessionId: 's', turnId: 't', agentId: 'a', workspace: '/tmp' },
    toolTimeoutMs: 5_000,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    maxContinuations: 3,
    sleep: async () => {},
    ...extra,
  };
}

/** Runs the loop to its end: every event in order, and the result. */
export async function runLoop(p: QueryParams): Promise<{ events: AgentEvent[]; result: QueryResult }> {
  const events: AgentEvent[] = [];
  const gen = query(p);
  for (;;) {
    const r = await gen.next();
    if (r.done) return { events, result: r.value };
    events.push(r.value);
  }
}
