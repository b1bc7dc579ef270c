import type { AskSource } from '@switchboard/agent';

/** Every ask source, in the order the pipeline reports them when several steps ask. */
export const ASK_SOURCES: readonly AskSource[] = Object.freeze(['safety', 'rule', 'hook', 'sandbox', 'plan', 'mode']);

/** Whether `s` names an ask source. */
export function isAskSource(s: unknown): s is AskSource {
  return typeof s === 'string' && (ASK_SOURCES as readonly string[]).includes(s);
}

/**
 * Whether an automatic responder — a PermissionRequest hook, or an auto-mode classifier — may
 * answer an ask from `source`. Only the mode's default ask qualifies (DESIGN §1): asks raised by
 * safety checks, ask rules, hooks or an unsandboxed command are explicit demands for a person.
 * The one rule every automatic responder goes through.
 */
export function mayAnswerAutomatically(source: AskSource): boolean {
  return source === 'mode';
}

/**
 * Whether an approval from `source` may offer "always allow" (save a rule). A plan approval
 * (`plan`) may not: it is a one-off decision to leave plan mode, never a standing permission.
 */
export function offersAlways(source: AskSource | string | undefined): boolean {
  return source !== 'plan';
}

/** Why an automatic responder may not answer an ask from `source` (for logs and audit). */
export function whyPeopleOnly(source: AskSource): string {
  switch (source) {
    case 'mode':
      return 'the mode asked by default, which automatic responders may answer';
    case 'safety':
      return 'a safety check asked, and no automatic responder may approve past a safety check';
    case 'rule':
      return 'an ask rule asked, and an operator rule that demands a person is answered by a person';
    case 'hook':
      return 'a PreToolUse hook asked for a person';
    case 'sandbox':
      return 'the command would run outside a sandbox, which only a person may allow';
    case 'plan':
      return 'a plan asks to leave plan mode, which only the person may decide';
  }
}
