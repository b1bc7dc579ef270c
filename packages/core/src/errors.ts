/**
 * The stable error codes live in one catalogue at the lowest layer (`@switchboard/agent`'s
 * errors.ts); core re-exports it so `import { SwbErrorCode, isSwbError } from '@switchboard/core'`
 * keeps working.
 */
export { isSwbError, isSwbErrorCode, SWB_ERRORS, SwbError, SwbErrorCode, type SwbErrorInfo, swbErrorInfo } from '@switchboard/agent';
