import type { AssistantBlock, ModelClient, ModelRequest, ModelResponse, ModelStreamEvent } from '../src/index.js';
import type { ModelError } from '../src/index.js';

export type Step = { content: AssistantBlock[]; stopReason?: string } | { error: ModelError };

/**
 * An in-memory ModelClient for unit tests of the loop (the end-to-end tests use the loopback
 * Anthropic fake instead). Records every request.
 */
export class ScriptedModel implements ModelClient {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly steps: Step[]) {}

  async *stream(req: ModelRequest): AsyncGenerator<ModelStreamEvent, ModelResponse, void> {
    this.requests.push(structuredClone(req));
    const step = this.steps.shift();
    if (!step) throw new Error('script exhausted');
    if ('error' in step) throw step.error;
    for (const b of step.content) if (b.type === 'text') yield { type: 'text_delta', text: b.text };
    const hasTool = step.content.some((b) => b.type === 'tool_use');
    return {
      message: { role: 'assistant', content: step.content },
      stopReason: step.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
      usage: { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      model: req.model,
    };
  }
}
