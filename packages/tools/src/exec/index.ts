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
