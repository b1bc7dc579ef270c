export type {
  AcceptResult,
  ApprovalAnswer,
  Channel,
  ChannelApprovals,
  ChannelCapabilities,
  ChannelClientAuth,
  ConsoleUpgradeCheck,
  ChannelCommands,
  ChannelContext,
  ChannelCursors,
  ChannelFactory,
  ChannelFactoryDeps,
  ChannelHealth,
  ChannelHttp,
  ChannelInbox,
  ExclusiveReceiver,
  ChannelLedger,
  ChannelModule,
  ChannelPeople,
  CompactSessionResult,
  ClientTokenCheck,
  ConfigSource,
  ConversationRef,
  DeliveryContent,
  DeliveryRecord,
  InboundFile,
  InboundMessage,
  LedgerWrite,
  NewDelivery,
  PendingApproval,
  RenderMeta,
  SenderRef,
  SendFileMeta,
  SessionStatus,
  TurnEvent,
  TurnLedger,
  TurnState,
} from './channel.js';
export { DeliveryLedger, type DeliveryStore, type LedgerOwner } from './delivery-ledger.js';
export { describeConfigSource, describeNetworkCause, type ChannelDoctor, type DoctorCheck, type DoctorConfigSource, type DoctorDeps } from './doctor-check.js';
export {
  ChatCommands,
  COMPACT_REFUSAL_TEXT,
  compactedText,
  type ChatCommandInput,
  type ChatCommandResult,
  type ChatCommandSpec,
  type CompactRefusal,
} from './chat-commands.js';
export { parseSessionKey, type SessionKey, sessionKeyString } from './session-key.js';
export {
  type Approval,
  type ApprovalStatus,
  type AuditEntry,
  type Entry,
  type EntryKind,
  type Fence,
  type Identity,
  type InboxItem,
  type NewApproval,
  type NewEntry,
  type NewPairingRequest,
  type PairingLimits,
  type PairingOutcome,
  type PairingRequest,
  type PairingStatus,
  type PolicyOverride,
  type Principal,
  type Role,
  ROLES,
  type Scope,
  SCOPES,
  type Session,
  type SessionFilter,
  type SessionLeaseStore,
  type SessionSettings,
  type Sidechain,
  type SidechainState,
  type Storage,
  type StoredRule,
  type OfferSwitch,
  type Profile,
  type StoredProfile,
  type TokenKind,
  type TokenRecord,
  type Turn,
  type TurnFinish,
  type TurnSummary,
  type TurnUsage,
  type TurnWrite,
} from './storage.js';
export type { BucketLimit, BucketTake, FailureBegin, FailureLimits, SharedCounters } from './shared-counters.js';
export * from './budgets/index.js';
export { type NewUsageRecord, type UsageFilter, type UsageRecord, type UsageReport, type UsageTotals, usageCost } from './usage.js';
export { AsyncQueue } from './async-queue.js';
export {
  type AssistantPayload,
  rebuildMessages,
  type Rebuilt,
  type ToolResultPayload,
  type ToolStartPayload,
  turnText,
  type UserPayload,
} from './transcript.js';
export { isTimeZone, turnStamp } from './turn-stamp.js';
export { contextMeter, meterShaper, TokenEstimators, type ContextMeter } from './context/meter.js';
export { CompactionBreaker } from './context/compaction-breaker.js';
export { type CompactionHooks, type CompactionSettings, DEFAULT_COMPACTION } from './context/compaction-run.js';
export type { ManualCompactResult } from './context/compaction-engine.js';
export { type CompactPayload, lastBoundary } from './context/compaction-view.js';
export {
  CONTEXT_CONSUMERS,
  contextReport,
  contextReportLines,
  lastCompaction,
  sharePercent,
  utcMinute,
  type ContextConsumer,
  type ContextConsumerName,
  type ContextReport,
  type ContextReportInput,
  type ContextReportLines,
  type LastCompaction,
} from './context/context-report.js';
export { requestView } from './context/request-view.js';
export {
  type CountTokensSettings,
  countMargin,
  DEFAULT_COUNT_MARGIN,
  MIN_COUNT_MARGIN,
  ExactCounter,
  type ExactCounting,
  nearThreshold,
  turnCounting,
} from './context/exact-count.js';
export {
  clearedSince,
  type MicrocompactPayload,
  microcompactForTurn,
  microcompactShaper,
  type MicrocompactShaperOptions,
} from './context/microcompact-shaper.js';
export {
  createReadResultTool,
  READ_RESULT_DEFAULT_LENGTH,
  READ_RESULT_MAX_LENGTH,
  type ReadResultInput,
  resultPage,
  storedResult,
} from './context/read-result.js';
export { isLeaseLost, type ReplicaLaneSettings, SessionLanes } from './session-lanes.js';
export {
  type AgentRuntime,
  countUsage,
  type EngineOptions,
  type Route,
  suspendedForShutdown,
  type TurnEndFacts,
  TurnEngine,
  type TurnPolicy,
  type TurnPolicyContext,
} from './engine.js';
export { isSwbError, isSwbErrorCode, SWB_ERRORS, SwbError, SwbErrorCode, swbErrorInfo, type SwbErrorInfo } from './errors.js';
export {
  alwaysRuleFor,
  singleAlwaysRule,
  ASK_SOURCES,
  type CallScopes,
  canonicalToolName,
  canSetMode,
  checkRuleSyntax,
  checkRuleText,
  checkSafety,
  type CommandHook,
  compilePathGlob,
  decidePermission,
  DEFAULT_DENIAL_LIMITS,
  DEFAULT_HOOK_TIMEOUT_MS,
  DEFAULT_MATCH_KINDS,
  DEFAULT_PERMISSION_MODE,
  type DenialCounts,
  type DenialLimits,
  type DenialState,
  DenialTracker,
  describeLimit,
  describeScope,
  effectiveMode,
  escapeRuleContent,
  evaluateRules,
  exactRuleFor,
  GROUP_RULE,
  HOOK_EVENTS,
  type HookDefinition,
  hookDefinitionSchema,
  type HookEvent,
  type HookFailure,
  hookLabel,
  type HookLog,
  hookMatches,
  type HookOpinion,
  type HookPayload,
  type HookPayloads,
  HookRunError,
  type HookRunnerOptions,
  type HookRunResult,
  type HooksConfig,
  hooksConfigSchema,
  type HookToolFields,
  type HookTurnFields,
  hostOf,
  type HttpHook,
  isAskSource,
  isPermissionMode,
  isWorkspaceEdit,
  LITERAL_PREFIX,
  literalOf,
  literalPath,
  lowerMode,
  matchCommand,
  matchContent,
  matchDomain,
  type MatchKind,
  matchLiteral,
  type MatchOptions,
  matchPath,
  matchToolName,
  MAX_HOOK_OUTPUT_BYTES,
  mayAnswerAutomatically,
  offersAlways,
  MODE_ORDER,
  type ModeChangeCheck,
  modeRank,
  type ModeResolution,
  type ModeSetting,
  modeSettings,
  parseOpinion,
  parseRule,
  type PermissionCall,
  type PermissionEnv,
  PermissionErrorCode,
  type PermissionMode,
  type PermissionRole,
  type PermissionRule,
  type PermissionScope,
  type PermissionScopeKind,
  type PipelineResult,
  type PipelineSource,
  preFilter,
  type PreToolUseCallback,
  preToolUseFromHooks,
  type PreToolUseRequest,
  printRule,
  protectedPathReason,
  RealPathError,
  realRuleContent,
  resolveMode,
  ROLE_MODE_CEILING,
  roleCeiling,
  type RoleCeilings,
  type RuleBehavior,
  type RuleEvaluation,
  type RuleProblem,
  type RuleSet,
  RuleSyntaxError,
  runCommandHook,
  runHooks,
  type RunHooksOptions,
  runHttpHook,
  type SafetyHit,
  type SafetyOptions,
  SCOPE_ORDER,
  scopeApplies,
  type ScopedRule,
  type ScopeModeEntry,
  type ScopeModes,
  scopeRank,
  scopesOf,
  toDecision,
  TOOL_ALIASES,
  TOOL_GROUPS,
  TOOL_HOOK_EVENTS,
  type ToolGroup,
  toolMatchKind,
  toWorkspaceRelative,
  validateContentPattern,
  validateRuleSet,
  walkFilter,
  type WalkFilterEnv,
  whyPeopleOnly,
} from './permissions/index.js';
export {
  AUTO_CLASSIFIER_MARKER,
  classifierRequest,
  classify,
  DEFAULT_AUTO_CLASSIFIER,
  MAX_REASON_CHARS,
  parseClassifierOutput,
  type AutoClassifierSettings,
  type ClassifierOutcome,
  type ClassifierStageRecord,
  type ClassifierVerdict,
} from './permissions/auto-classifier.js';
export { TurnAutoMode } from './policy/auto-mode.js';
export { autoModeLine, autoModeStatus, type AutoModeStatus } from './policy/auto-mode-status.js';
export {
  type ApprovalActivity,
  ApprovalBroker,
  type ApprovalBrokerOptions,
  type ApprovalDecision,
  type ApprovalOutcome,
  type ApprovalRequest,
  type Approver,
  type DecideOutcome,
} from './approvals/broker.js';
export { PolicyService, type ModeContext } from './policy/service.js';
export {
  LiveSettings,
  type AgentPolicySettings,
  type PolicyHookOptions,
  type PolicyServiceOptions,
  type PolicySettings,
  type RuleLists,
  type SettingsSource,
} from './policy/settings.js';
export { HookBridge, permissionRequestResponder, turnHookCallbacks, type TurnHookContext } from './policy/hook-bridge.js';
export { askForApproval, type AskCall, type AskDeps } from './policy/ask.js';
export { EXIT_PLAN_MODE, PLAN_MAX_CHARS, PLAN_QUESTION, PlanExit, planChoiceLabel, planExitChoices, type PlanExitDeps } from './policy/plan-exit.js';
export { roomDenyRules, settingsRules, storedRules, type RuleExpander } from './policy/rule-set.js';
export { SessionGrants, type SessionGrantsDeps } from './policy/session-grants.js';
export { principalMode, setPrincipalMode } from './policy/principal-modes.js';
export {
  CapabilityRegistry,
  TOOL_PROFILES,
  type Capability,
  type CapabilityKind,
  type RegistryInput,
  type RiskFacts,
  type ToolProfile,
  type ToolProfileSetting,
} from './registry.js';
export {
  ALL_ROLES,
  coversEveryRole,
  DEFAULT_OFFERED_TO,
  OfferedToError,
  offerScopeOf,
  type OfferContext,
  type OfferScope,
} from './capability-offers.js';
export {
  BOUNDARY_FIELDS,
  type BoundaryField,
  type BoundaryPolicy,
  decideGate,
  type GateDecision,
  type GateInput,
  pairingCode,
  RateLimiter,
  type RoomPolicy,
  type SenderBuckets,
  SharedRateLimiter,
} from './boundary/policy.js';
export { BoundaryService, type BoundaryServiceOptions, type FieldView, type GateCounters } from './boundary/service.js';
export {
  type BoundaryFieldsInput,
  type BoundarySettings,
  DEFAULT_RATE_LIMIT,
  LOCKED_DOWN_POLICY,
  type PairingSettings,
  resolveBoundaryPolicy,
} from './boundary/settings.js';
export type { ApproveOutcome, PairingActivity } from './boundary/pairing-desk.js';
export type { ApprovalAsk } from './boundary/pairing-rules.js';
export { INBOX_TOO_LARGE, inboxTooLarge } from './inbox-limits.js';
export type { ImageBlock, OutboundFile } from '@switchboard/agent';
export { imageDigest, type InboundImage, MAX_IMAGE_BLOCK_BYTES, sniffImageType, userContent } from './inbound-images.js';
export { FileShelf, type FileShelfOptions, type ShelfTicket, type ShelvedFile } from './file-shelf.js';
export {
  alternativeName,
  attachInboundFiles,
  downloadSignal,
  readBounded,
  describeSavedFile,
  describeUnsavedFile,
  fileOwner,
  INBOX_DIR,
  sanitizeFileName,
  type SavedFile,
  writeNew,
} from './inbound-files.js';
export { Router, type RouterOptions } from './router.js';
export { TranscriptCache } from './transcript-cache.js';
export { encodeSegment, workspaceDir, WorkspaceDirectories, type WorkspaceDirectoriesOptions, type WorkspaceMode, type WorkspaceOwner } from './workspaces.js';
export { earliestOwner, LAYOUT_MARKER, type LegacyWorkspaceMigration, migrateLegacyWorkspace, type MigrationOutcome } from './workspace-migration.js';
export type { ChannelFanout, MarkPut, ReplicaBus, ReplicaSignal, SharedMarks, SignalField } from './replica-bus.js';
export { type AccessChange, AccessEvents, type AccessListener, isDemotion } from './access-events.js';
export { ownValue } from './own.js';
export { describeThrown, FaultBoundary, type FaultDescription, type FaultScope } from './fault-boundary.js';
export { AttemptCounter, countsAsAttempt, DEAD_LETTER_APOLOGY, type DeadLetter, type DeadLetterInput, previewText } from './dead-letters.js';
export { MIN_SCRUBBED_SECRET_LENGTH, scrubbableSecrets, scrubSecretValues } from './secret-scrub.js';
export { parseDuration, duration } from './duration.js';
export {
  boundaryShape,
  channelAccountShape,
  dmPolicySchema,
  groupPolicySchema,
  permissionModeSchema,
  queueModeSchema,
  rateLimitSchema,
  refineBoundary,
  roleSchema,
  roomAccountShape,
  roomSchema,
} from './channel-account.js';
export type { TurnEndReason, TurnEndState } from './turn-end.js';
export { type FinishWithDelivery, TurnFinishes } from './turn-finishes.js';
export * from './tool-deferral/index.js';
export {
  MAX_TOOL_PROGRESS_CHARS,
  MAX_TOOL_STATUS_LINES,
  MAX_TOOL_SUMMARY_CHARS,
  TASK_TOOL,
  type TextScrub,
  summarizeProgress,
  summarizeToolInput,
  type ToolStatusEntry,
  type ToolStatusState,
  ToolStatusBoard,
  toolStatusLine,
} from './tool-status.js';
export * from './memory/index.js';
export { memoryPart, PersonalData, profilePart, type PersonalDataPart, type PersonalExport, personWorkspaces, workspacePart } from './personal-data.js';
export * from './instructions/index.js';
export * from './skills/index.js';
export * from './subagents/index.js';
