/**
 * Re-exports for `config.ts` and `config-channels.ts` (owned by others in issue 12): the
 * capability registry, tool groups and profiles live in `@switchboard/core`. Delete this file once
 * those imports point at core.
 */
export { TOOL_GROUPS, TOOL_PROFILES, checkRuleText } from '@switchboard/core';
