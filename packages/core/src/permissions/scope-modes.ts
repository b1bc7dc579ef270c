import { ROLE_MODE_CEILING, effectiveMode, modeRank, roleCeiling, type ModeSetting, type PermissionMode, type RoleCeilings } from './modes.js';
import type { PermissionScope, PermissionScopeKind } from './scopes.js';

/** One scope's instance and the mode it sets (`mode` undefined: the scope sets none). */
export interface ScopeModeEntry {
  id: string;
  mode?: PermissionMode | undefined;
}

/**
 * The mode each scope of one call sets, broad to narrow (DESIGN §1): gateway
 * `permissions.mode`, agent `agents.<id>.mode`, channel account `permissionMode`, conversation
 * (a room's `groups.<id>.mode`), principal and session (control API, or `/mode` in chat for the
 * session). The role scope sets the ceiling, see {@link resolveMode}.
 */
export interface ScopeModes {
  gateway?: PermissionMode | undefined;
  agent?: ScopeModeEntry | undefined;
  channel?: ScopeModeEntry | undefined;
  conversation?: ScopeModeEntry | undefined;
  principal?: ScopeModeEntry | undefined;
  session?: ScopeModeEntry | undefined;
}

/** The outcome of {@link resolveMode}. */
export interface ModeResolution {
  /** The mode in force. */
  mode: PermissionMode;
  /** The role's ceiling. */
  ceiling: PermissionMode;
  /** The scope whose setting (or the role ceiling, or the built-in default) gave `mode`; the broadest one on a tie. */
  limitedBy: PermissionScopeKind | 'default';
  /** Every setting that applied, broad to narrow. */
  settings: ModeSetting[];
}

const KINDS = ['agent', 'channel', 'conversation', 'principal', 'session'] as const;

/** The applicable settings of `modes`, broad to narrow. */
export function modeSettings(modes: ScopeModes): ModeSetting[] {
  const out: ModeSetting[] = [];
  if (modes.gateway) out.push({ scope: { kind: 'gateway' }, mode: modes.gateway });
  for (const kind of KINDS) {
    const e = modes[kind];
    if (e?.mode) out.push({ scope: { kind, id: e.id } satisfies PermissionScope, mode: e.mode });
  }
  return out;
}

/**
 * The mode of one call: the least trusted of the role's ceiling (`permissions.roleCeilings`) and
 * every scope's setting — a narrower scope may lower trust, never raise it above a broader scope
 * or the ceiling. With no setting at all, `default` capped by the ceiling.
 */
export function resolveMode(modes: ScopeModes, role: string, ceilings: RoleCeilings = ROLE_MODE_CEILING): ModeResolution {
  const settings = modeSettings(modes);
  const ceiling = roleCeiling(role, ceilings);
  const mode = effectiveMode(settings, ceiling);
  let limitedBy: ModeResolution['limitedBy'] = settings.length === 0 && modeRank(ceiling) >= modeRank('default') ? 'default' : 'role';
  if (modeRank(ceiling) > modeRank(mode)) limitedBy = settings.find((s) => s.mode === mode)?.scope.kind ?? 'default';
  return { mode, ceiling, limitedBy, settings };
}

/** Words for where a mode limit comes from, for refusals shown to people. */
export function describeLimit(r: Pick<ModeResolution, 'limitedBy'>, role: string): string {
  switch (r.limitedBy) {
    case 'gateway':
      return 'the gateway (permissions.mode)';
    case 'agent':
      return "this agent's mode";
    case 'channel':
      return "this channel account's permissionMode";
    case 'conversation':
      return "this room's mode";
    case 'role':
      return `the ${role} role (permissions.roleCeilings)`;
    case 'principal':
      return 'the mode an operator set for you';
    case 'session':
      return "this session's mode";
    default:
      return 'the default mode';
  }
}
