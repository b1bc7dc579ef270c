import { type ModelClient, ModelError, type ModelRequest } from '@switchboard/agent';
import { ScriptedModel, type Step } from './scripted-model.js';

/** One scripted token count: a number to answer, an error to throw, or a promise to wait for (aborted by the call's signal). */
export type CountStep = number | ModelError | Promise<number>;

/**
 * A {@link ScriptedModel} that also has `countTokens` (the plain one has none, like a client
 * without the API): answers with `counts` in order — once they run out, with `fallback(req)` —
 * and records every request it was asked to count.
 */
export class CountingScriptedModel extends ScriptedModel implements Required<Pick<ModelClient, 'countTokens'>> {
  readonly counted: ModelRequest[] = [];

  constructor(
    steps: Step[],
    private readonly counts: CountStep[] = [],
    private readonly fallback?: (req: ModelRequest) => number,
  ) {
    super(steps);
  }

  /** Appends count answers. */
  pushCounts(...counts: CountStep[]): void {
    this.counts.push(...counts);
  }

  async countTokens(req: ModelRequest, signal: AbortSignal): Promise<number> {
    this.counted.push(structuredClone(req));
    if (signal.aborted) throw new ModelError('aborted', 'request aborted');
    const next = this.counts.shift();
    if (next === undefined) {
      if (this.fallback) return this.fallback(req);
      throw new Error('count script exhausted');
    }
    if (next instanceof ModelError) throw next;
    if (typeof next === 'number') return next;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new ModelError('aborted', 'request aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([next, aborted]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
