export * from './channel.js';
export { DeliveryLedger, type DeliveryStore, type LedgerOwner } from './delivery-ledger.js';
export { ChatCommands, type ChatCommandInput, type ChatCommandResult, type ChatCommandSpec } from './chat-commands.js';
export * from './session-key.js';
export * from './storage.js';
export * from './async-queue.js';
export * from './transcript.js';
export * from './engine.js';
export * from './errors.js';
export * from './permissions/index.js';
export * from './approvals/broker.js';
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
export * from './boundary/policy.js';
export { BoundaryService, type BoundaryServiceOptions, type FieldView, type GateCounters } from './boundary/service.js';
export {
  type BoundaryFieldsInput,
  type BoundarySettings,
  DEFAULT_RATE_LIMIT,
  LOCKED_DOWN_POLICY,
  type PairingSettings,
  resolveBoundaryPolicy,
} from './boundary/settings.js';
export type { ApproveOutcome } from './boundary/pairing-desk.js';
export type { ApprovalAsk } from './boundary/pairing-rules.js';
export { INBOX_TOO_LARGE, inboxTooLarge } from './inbox-limits.js';
export { Router, type RouterOptions } from './router.js';
export * from './transcript-cache.js';
export * from './workspaces.js';
export * from './workspace-migration.js';
export * from './access-events.js';
export * from './own.js';
export * from './fault-boundary.js';
export * from './dead-letters.js';
export * from './secret-scrub.js';
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
