/**
 * Re-export for `channel-context.ts` only (owned by another helper of issue 12): the turn policy
 * lives in `@switchboard/core`. Delete this file once that import points at core.
 */
export type { PolicyService } from '@switchboard/core';
