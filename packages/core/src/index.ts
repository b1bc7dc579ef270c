export * from './channel.js';
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
export * from './transcript-cache.js';
export * from './workspaces.js';
export * from './workspace-migration.js';
export * from './access-events.js';
export * from './own.js';
export * from './fault-boundary.js';
export * from './dead-letters.js';
export * from './secret-scrub.js';
