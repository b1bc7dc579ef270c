import type { Session, SessionSettings } from '../storage.js';

/** Where a session in auto mode stands, for `/status` and `/context`. */
export interface AutoModeStatus {
  /** `classifier`: the classifier answers the mode's asks; `handed_back`: people do, after repeated blocks. */
  state: 'classifier' | 'handed_back';
  /** When it was handed back (ISO time). */
  handedBackAt?: string;
  /** Why it was handed back. */
  reason?: string;
}

/** The hand-back stored in a session's settings, when it is well-formed. */
export function autoHandbackOf(settings: SessionSettings): { at: number; reason: string } | undefined {
  const h = settings.autoHandback as unknown;
  if (typeof h !== 'object' || h === null) return undefined;
  const { at, reason } = h as Record<string, unknown>;
  return typeof at === 'number' && Number.isFinite(at) && typeof reason === 'string' ? { at, reason } : undefined;
}

/** The auto-mode status of a session whose mode in force is `mode` (undefined unless `auto`). */
export function autoModeStatus(session: Session, mode: string): AutoModeStatus | undefined {
  if (mode !== 'auto') return undefined;
  const h = autoHandbackOf(session.settings);
  return h ? { state: 'handed_back', handedBackAt: new Date(h.at).toISOString(), reason: h.reason } : { state: 'classifier' };
}

/** One line for `/status` and `/context`. */
export function autoModeLine(status: AutoModeStatus): string {
  return status.state === 'classifier'
    ? 'Auto mode: the classifier decides what would otherwise ask you'
    : `Auto mode: handed back to you at ${status.handedBackAt?.slice(0, 16).replace('T', ' ')} UTC (${status.reason}); /mode auto turns it on again`;
}
