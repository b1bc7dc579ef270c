export {
  analyzeCommand,
  type ExecCheckOptions,
  type ExecCheckResult,
  type ExecChecks,
  type ExecOutcome,
  type ExecPartResult,
  loadExecChecks,
} from './exec-checks.js';
export { loadShellParser, type ShellParser } from './shell-parser.js';
export {
  createExecTool,
  EXEC_TOOL,
  type ExecAgentSettings,
  type ExecInput,
  type ExecRunRecord,
  type ExecSlots,
  type ExecToolOptions,
  formatExecResult,
  MAX_COMMAND_CHARS,
} from './exec-tool.js';
export { type HostRunOptions, runOnHost } from './run-host.js';
export * from './sandbox.js';
