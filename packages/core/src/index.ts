export * from './channel.js';
export { DeliveryLedger, type DeliveryStore, type LedgerOwner } from './delivery-ledger.js';
export { describeConfigSource, describeNetworkCause, type ChannelDoctor, type DoctorCheck, type DoctorConfigSource, type DoctorDeps } from './doctor-check.js';
export { ChatCommands, type ChatCommandInput, type ChatCommandResult, type ChatCommandSpec } from './chat-commands.js';
export * from './session-key.js';
export * from './storage.js';
export * from './async-queue.js';
export * from './transcript.js';
export * from './engine.js';
export * from './errors.js';
export * from './permissions/index.js';
export * from './approvals/broker.js';
export * from './boundary/policy.js';
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
