import type { Logger } from 'pino';
import type { BoundaryPolicy } from '../boundary/policy.js';
import type { ConversationRef } from '../channel.js';
import type { ApprovalBroker } from '../approvals/broker.js';
import type { DenialLimits } from '../permissions/denials.js';
import type { HooksConfig } from '../permissions/hooks.js';
import type { ModelClient } from '@switchboard/agent';
import type { AutoClassifierSettings } from '../permissions/auto-classifier.js';
import type { PermissionMode, RoleCeilings } from '../permissions/modes.js';
import type { Skill } from '../skills/discover.js';
import type { Storage } from '../storage.js';
import type { WorkspaceDirectories } from '../workspaces.js';

/**
 * A value the wiring replaces while the gateway runs (a config reload): readers read `current`
 * on every use and never keep it. Each value is immutable; a change is a new value.
 */
export interface SettingsSource<T> {
  readonly current: T;
}

/** A {@link SettingsSource} the wiring sets: `set` replaces the value readers see next. */
export class LiveSettings<T> implements SettingsSource<T> {
  #value: T;

  constructor(initial: T) {
    this.#value = initial;
  }

  get current(): T {
    return this.#value;
  }

  /** Replaces the value (after a reload). */
  set(next: T): void {
    this.#value = next;
  }
}

/** Permission rule texts at one scope: `Tool`, `Tool(content)` or `group:*` shorthands. */
export interface RuleLists {
  readonly allow: readonly string[];
  readonly ask: readonly string[];
  readonly deny: readonly string[];
}

/** One agent's permission settings (`agents.<id>.permissions` and `.mode`). */
export interface AgentPolicySettings {
  readonly mode?: PermissionMode | undefined;
  readonly rules: RuleLists;
}

/** The turn policy's settings that may change while the gateway runs (they follow reloads). */
export interface PolicySettings {
  /** Gateway-scope rules (`permissions.allow/ask/deny`). */
  readonly rules: RuleLists;
  /** The gateway-wide mode (`permissions.mode`); unset: no gateway-wide cap. */
  readonly mode?: PermissionMode | undefined;
  /** Agents by id. */
  readonly agents: ReadonlyMap<string, AgentPolicySettings>;
  /** The most trusted mode each role may run in (`permissions.roleCeilings`). */
  readonly roleCeilings: RoleCeilings;
  /** The auto-mode classifier (`permissions.auto`). */
  readonly auto: AutoClassifierSettings;
}

/** How the policy runs hooks: fixed at start-up. */
export interface PolicyHookOptions {
  /** Hooks by event (`hooks`). */
  readonly config: HooksConfig;
  /** The whole environment command hooks get (never the gateway's own: it holds secrets). */
  readonly env: Readonly<Record<string, string>>;
  /** Time a hook may take when it sets none (`permissions.hookTimeout`). */
  readonly defaultTimeoutMs: number;
}

/** What {@link PolicyService} is built from: resolved values and services, never the gateway's config. */
export interface PolicyServiceOptions {
  /** The settings in force, read on every use: rules, modes and ceilings follow reloads. */
  settings: SettingsSource<PolicySettings>;
  storage: Storage;
  broker: ApprovalBroker;
  log: Logger;
  /** Removes secrets from text shown in approvals and the audit log. */
  scrub(text: string): string;
  /**
   * Told each time the stored rules changed here ({@link PolicyService.invalidateRules}), so other
   * replicas on the same database drop their caches too ({@link PolicyService.dropCachedRules}).
   * Must not throw.
   */
  onRulesChanged?: () => void;
  /** Hooks, their environment and default timeout. */
  hooks: PolicyHookOptions;
  /** When consecutive or total denials stop a turn (`permissions.denialLimits`). */
  denialLimits: DenialLimits;
  /** How long a session grant lasts (`permissions.sessionGrantTtl`). */
  sessionGrantTtlMs: number;
  /** Files no tool may touch without asking: the gateway's config file (if any) and database. */
  protectedFiles: { configFile?: string | undefined; databaseFile?: string | undefined };
  /** Expands a `group:*` rule into per-tool rules (the capability registry); other rules pass through. */
  expandRule?(rule: string): string[];
  /** The roles a tool is offered to by default (the capability registry's `offeredTo`); unset: every tool to every role. */
  offeredTo?(tool: string): readonly string[];
  /**
   * The skills of a turn (the catalog's `forTurn`) and the members of a `group:*` in a skill's
   * `allowed-tools`. Unset: no skills (the `skill` tool is never offered).
   */
  skills?: TurnSkillSource;
  /** The effective boundary policy of a channel account by id (config with operators' overrides): its `permissionMode` and rooms. */
  boundaryPolicy?(channelId: string): Promise<BoundaryPolicy | null>;
  /** Where each turn's file tools work (per person, per room, or shared). */
  workspaces: WorkspaceDirectories;
  /** The model client the auto-mode classifier calls; absent: the classifier is unavailable and people answer every ask. */
  model?: ModelClient;
  /** Tells a conversation something from the gateway (lapsed session grants, the auto-mode hand-back). Must not throw. */
  notify?(to: ConversationRef, text: string): Promise<void>;
}

/** Where a turn's skills come from (see {@link PolicyServiceOptions.skills}). */
export interface TurnSkillSource {
  /** Every skill an agent's turn may offer before the switches (the gateway's, the agent's, its workspace's). */
  forTurn(agentId: string, workspace: string | undefined, log: Logger): Promise<Skill[]>;
  /** The tools of a `group:*` shorthand. */
  groupMembers(group: string): readonly string[];
}
