import { LiveSettings, type AgentPolicySettings, type PolicySettings, type SettingsSource } from '@switchboard/core';
import type { Config } from './config.js';
import type { LiveConfig } from './live-config.js';

/** The turn policy's reloadable settings, resolved from one config. */
export function policySettingsOf(cfg: Readonly<Config>): PolicySettings {
  const agents = new Map<string, AgentPolicySettings>();
  for (const [id, agent] of Object.entries(cfg.agents)) agents.set(id, { mode: agent.mode, rules: agent.permissions });
  const { allow, ask, deny, mode, roleCeilings } = cfg.permissions;
  const a = cfg.permissions.auto;
  const auto = {
    model: a.model ?? cfg.model.name,
    fastTimeoutMs: a.fastTimeout,
    reasonTimeoutMs: a.reasonTimeout,
    fastMaxTokens: a.fastMaxTokens,
    reasonMaxTokens: a.reasonMaxTokens,
  };
  return { rules: { allow, ask, deny }, mode, agents, roleCeilings, auto };
}

/**
 * The policy settings of the config in force: resolved once now and again after each reload that
 * changed something. Register it before the listener that drops the policy's rule cache, so the
 * cache is rebuilt from the new settings.
 */
export function livePolicySettings(live: LiveConfig): SettingsSource<PolicySettings> {
  const settings = new LiveSettings(policySettingsOf(live.current));
  live.onChange((next) => settings.set(policySettingsOf(next)));
  return settings;
}
