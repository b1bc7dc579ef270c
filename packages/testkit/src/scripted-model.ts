import {
  type AssistantBlock,
  type ModelClient,
  ModelError,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  type Usage,
} from '@switchboard/agent';

/**
 * One scripted model answer: content (streamed as text deltas, then returned), or an error to
 * throw. `hold` keeps the call open after its deltas until it settles — or the call's signal
 * aborts, which throws `ModelError('aborted')` like the real client. `cutToolUseId` marks the
 * last tool_use as cut by `max_tokens` (give `stopReason: 'max_tokens'` too), as the real client does.
 * `usage` is what the answer reports (default: one input and one output token).
 */
export type Step = { content: AssistantBlock[]; stopReason?: string; hold?: Promise<unknown>; cutToolUseId?: string; usage?: Usage } | { error: ModelError };

/**
 * An in-memory ModelClient for unit tests of the loop and the engine (the end-to-end tests use
 * the loopback Anthropic fake instead). Answers with its steps in order and records every request.
 */
export class ScriptedModel implements ModelClient {
  readonly requests: ModelRequest[] = [];
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(private readonly steps: Step[]) {}

  /** Appends steps to the script. */
  push(...steps: Step[]): void {
    this.steps.push(...steps);
  }

  /** Resolves once `n` requests have been made. */
  requested(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  async *stream(req: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent, ModelResponse, void> {
    this.requests.push(structuredClone(req));
    for (const w of this.waiters.filter((x) => this.requests.length >= x.n)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
    const step = this.steps.shift();
    if (!step) throw new Error('script exhausted');
    if ('error' in step) throw step.error;
    for (const b of step.content) if (b.type === 'text') yield { type: 'text_delta', text: b.text };
    if (step.hold) await held(step.hold, signal);
    const hasTool = step.content.some((b) => b.type === 'tool_use');
    return {
      message: { role: 'assistant', content: step.content },
      stopReason: step.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
      usage: step.usage ?? { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      model: req.model,
      ...(step.cutToolUseId !== undefined ? { cutToolUseId: step.cutToolUseId } : {}),
    };
  }
}

/** Waits for `hold`, or throws `ModelError('aborted')` when `signal` aborts first. */
async function held(hold: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) {
    await hold;
    return;
  }
  if (signal.aborted) throw new ModelError('aborted', 'request aborted');
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ModelError('aborted', 'request aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([hold, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
