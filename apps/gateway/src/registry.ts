/**
 * Re-export for `config-channels.ts` only (owned by another helper of issue 12): the capability
 * registry lives in `@switchboard/core`. Delete this file once that import points at core.
 */
export { checkRuleText } from '@switchboard/core';
