/** The bubblewrap sandbox runner (issue 14): argv builder, runner, probe, workspace ownership, uid allocator. */
export {
  type BwrapArgsOptions,
  buildBwrapArgs,
  DEFAULT_SANDBOX_LIMITS,
  DEFAULT_TMP_BYTES,
  ETC_SAFE_SUBSET,
  parentDirs,
  PROTECTED_DIRS,
  PROTECTED_FILES,
  type SandboxLimits,
  sandboxEnv,
  sandboxPrelude,
  type SystemEntry,
} from './bwrap-args.js';
export {
  describeSystemLayout,
  grantSandboxGroup,
  type ProtectedPaths,
  prepareProtectedPaths,
  prepareWorkspaceForSandbox,
  SYSTEM_CANDIDATES,
  UidAllocator,
} from './layout.js';
export { OutputBuffer } from './output-buffer.js';
export { ExecRunQueue, type ExecRunQueueLimits, type ReleaseRunSlot, WAITING_FOR_RUNNER } from './run-queue.js';
export { childPids, isLive, killGroup, liveGroupMembers, processState, reapNamespace, signalPid } from './proc.js';
export { explainSandboxFailure, type ProbeOptions, probeSandbox, type SandboxProbe } from './probe.js';
export {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_OUTPUT_BUDGET,
  DEFAULT_PROGRESS_INTERVAL_MS,
  MIN_PROGRESS_INTERVAL_MS,
  runSandboxed,
  SandboxBusyError,
  type SandboxCallOptions,
  type SandboxProgress,
  type SandboxResult,
  type SandboxRunOptions,
} from './run.js';
