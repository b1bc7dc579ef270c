export { createTaskTool, type TaskTypeListing } from './task-tool.js';
export { type ReleaseSlot, type SubagentParent, SubagentRunner, type SubagentRunnerOptions, type SubagentSlots } from './runner.js';
export { boundedReport, GENERAL_INSTRUCTIONS, GENERAL_SUBAGENT, type SubagentType, subagentTools } from './types.js';
