import { z } from 'zod';
import { scopeRank, type PermissionScope } from './scopes.js';

/**
 * Permission modes, least to most trusted:
 * - `plan`: read-only tools only; everything else is denied with a plan-mode message (set for a
 *   session only, the model may present its plan with `exit_plan_mode`: a person's approval leaves it);
 * - `dontAsk`: nobody is asked — whatever would be asked is denied;
 * - `default`: read-only tools run, everything else not allowed by a rule is asked;
 * - `acceptEdits`: like `default`, plus file edits inside the workspace run without asking;
 * - `auto`: like `acceptEdits`, but the asks the mode itself raises (ask source `mode`) are
 *   decided by the auto-mode classifier (`auto-classifier.ts`), which can only let a call
 *   through or refuse it; every other ask still goes to a person;
 * - `bypassPermissions`: everything runs, except deny rules, ask rules, hook asks and safety checks.
 */
export type PermissionMode = z.infer<typeof permissionModeEnum>;

/** The modes as a zod enum, least to most trusted (config, control API and chat input). */
export const permissionModeEnum = z.enum(['plan', 'dontAsk', 'default', 'acceptEdits', 'auto', 'bypassPermissions']);

/** The modes, least to most trusted. */
export const MODE_ORDER: readonly PermissionMode[] = Object.freeze([...permissionModeEnum.options]);

/** A principal's role (see DESIGN §2). */
export type PermissionRole = 'owner' | 'admin' | 'member' | 'guest';

/**
 * The most trusted mode each role may ever run in, whatever any scope says.
 *
 * | role     | ceiling             | why                                                                 |
 * |----------|---------------------|---------------------------------------------------------------------|
 * | `owner`  | `bypassPermissions` | runs the gateway; may take every prompt away (deny rules and safety checks still hold) |
 * | `admin`  | `auto`              | manages people; may let the classifier answer the mode's asks, but bypass takes the human out of the loop entirely; kept for the owner |
 * | `member` | `acceptEdits`       | may let the assistant edit workspace files without asking           |
 * | `guest`  | `default`           | every non-read-only action is asked; guests cannot silence prompts  |
 */
export const ROLE_MODE_CEILING: Readonly<Record<PermissionRole, PermissionMode>> = Object.freeze({
  owner: 'bypassPermissions',
  admin: 'auto',
  member: 'acceptEdits',
  guest: 'default',
});

/** The most trusted mode per role; configuration (`permissions.roleCeilings`), {@link ROLE_MODE_CEILING} by default. */
export type RoleCeilings = Readonly<Record<PermissionRole, PermissionMode>>;

/** The mode used where no scope sets one (before the role ceiling applies). */
export const DEFAULT_PERMISSION_MODE: PermissionMode = 'default';

/** Trust rank of a mode (0 = `plan`). */
export function modeRank(mode: PermissionMode): number {
  return MODE_ORDER.indexOf(mode);
}

/** The less trusted of two modes. */
export function lowerMode(a: PermissionMode, b: PermissionMode): PermissionMode {
  return modeRank(a) <= modeRank(b) ? a : b;
}

/** Whether `s` names a mode. */
export function isPermissionMode(s: unknown): s is PermissionMode {
  return typeof s === 'string' && (MODE_ORDER as readonly string[]).includes(s);
}

/** The ceiling of a role under `ceilings` (the built-in defaults unless given); unknown roles get `default`, or less if `guest`'s ceiling is lower. */
export function roleCeiling(role: string, ceilings: RoleCeilings = ROLE_MODE_CEILING): PermissionMode {
  const unknown = lowerMode('default', ceilings.guest ?? 'default');
  return Object.hasOwn(ceilings, role) ? (ceilings[role as PermissionRole] ?? unknown) : unknown;
}

/** A mode set at one scope (only the settings that apply to the call are passed). */
export interface ModeSetting {
  scope: PermissionScope;
  mode: PermissionMode;
}

/**
 * The mode in force for a call. Settings are applied broad to narrow: each may lower trust, but
 * none can raise it above a broader setting or the role's ceiling — so the result is the least
 * trusted of the ceiling and every applicable setting. With no settings, {@link DEFAULT_PERMISSION_MODE}
 * capped by the ceiling.
 *
 * @param roleCeilingMode the person's ceiling, e.g. `roleCeiling(role)`.
 */
export function effectiveMode(settings: readonly ModeSetting[], roleCeilingMode: PermissionMode): PermissionMode {
  const ordered = [...settings].sort((a, b) => scopeRank(a.scope.kind) - scopeRank(b.scope.kind));
  let cap = roleCeilingMode;
  let mode: PermissionMode | undefined;
  for (const s of ordered) {
    mode = lowerMode(s.mode, cap);
    cap = mode;
  }
  return mode ?? lowerMode(DEFAULT_PERMISSION_MODE, roleCeilingMode);
}

/** The answer of {@link canSetMode}. */
export type ModeChangeCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether a chat user may set their own session to `requested`. Lowering trust is always
 * allowed; raising is allowed up to the lower of the role's ceiling and `broaderEffective` (the
 * mode that the scopes broader than the session give, e.g. `effectiveMode` of the non-session
 * settings). `broaderName` names where that limit comes from in the refusal.
 */
export function canSetMode(
  role: string,
  requested: PermissionMode,
  broaderEffective: PermissionMode,
  ceilings: RoleCeilings = ROLE_MODE_CEILING,
  broaderName = 'this conversation',
): ModeChangeCheck {
  const ceiling = roleCeiling(role, ceilings);
  if (modeRank(requested) > modeRank(ceiling)) {
    return { ok: false, reason: `the ${role} role may use at most ${ceiling} mode` };
  }
  if (modeRank(requested) > modeRank(broaderEffective)) {
    return { ok: false, reason: `${broaderName} allows at most ${broaderEffective} mode` };
  }
  return { ok: true };
}
