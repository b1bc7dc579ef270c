import { AUTO_CLASSIFIER_MARKER } from '@switchboard/core';
import type { RecordedRequest, ResponseHandler, ScriptedResponse } from './fake-anthropic-types.js';

/** The stage of an auto-mode classifier request (its system prompt opens with the classifier's marker), or undefined for any other request. */
export function classifierStage(req: RecordedRequest): 'fast' | 'reason' | undefined {
  const system = req.body.system;
  const text = typeof system === 'string' ? system : system?.find((b) => b.type === 'text')?.text;
  if (typeof text !== 'string' || !text.startsWith(AUTO_CLASSIFIER_MARKER)) return undefined;
  const stage = /^\S+ stage=(fast|reason)/u.exec(text)?.[1];
  return stage === 'fast' || stage === 'reason' ? stage : undefined;
}

/** Whether a recorded request is an auto-mode classifier call. */
export function isClassifierRequest(req: RecordedRequest): boolean {
  return classifierStage(req) !== undefined;
}

/** A classifier answer in the exact form the classifier must give. */
export function classifierVerdict(decision: 'allow' | 'block', reason: string): ScriptedResponse {
  return { text: JSON.stringify({ decision, reason }) };
}

/**
 * A handler (for `fake.setHandler`) that answers classifier calls with `answer(req, stage)` and
 * leaves every other request (the main model's) to `others`, the queue and the default.
 */
export function classifierHandler(answer: (req: RecordedRequest, stage: 'fast' | 'reason') => ScriptedResponse, others?: ResponseHandler): ResponseHandler {
  return (req) => {
    const stage = classifierStage(req);
    if (stage) return answer(req, stage);
    return others?.(req);
  };
}
