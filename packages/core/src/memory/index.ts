export { approvedCall, callerOf, MEMORY_TOOLS, type MemoryCaller, needsAdminApproval, readsTeam, teamWriteAccess, visibleScopes } from './access.js';
export { type MemoryCommandResult, memoryCommandText, runMemoryCommand } from './command.js';
export { type ForgetOutcome, MEMORY_LIST_MAX, MemoryDesk, type MemoryListing, memoryListingText } from './desk.js';
export { inReminderBand, SAVE_REMINDER_FROM, SAVE_REMINDER_TEXT, withSaveReminder } from './save-reminder.js';
export {
  createMemoryForgetTool,
  createMemorySaveTool,
  createMemorySearchTool,
  createMemoryTools,
  MEMORY_MAX_CHARS,
  MEMORY_SEARCH_MAX,
  type MemoryForgetInput,
  memoryLine,
  type MemorySaveInput,
  type MemorySearchInput,
  type MemoryToolStorage,
} from './tools.js';
export type { Memory, MemoryHit, MemoryRepo, MemoryScope, MemoryScopeRef, MemorySearch, NewMemory } from './types.js';
