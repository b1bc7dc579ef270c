import { BOUNDARY_FIELDS } from '@switchboard/core';
import type { Config } from './config.js';

/**
 * The config in force, for the parts of the gateway that may change while it runs (SIGHUP).
 * Each config is frozen (DESIGN §7): a reload never mutates one, it replaces the holder's
 * current config with a new frozen one. Readers that must see reloads read `current` on every
 * use; everything built once at start keeps the config it was built with.
 */
export class LiveConfig {
  private cfg: Readonly<Config>;
  private readonly listeners: Array<(cfg: Readonly<Config>) => void> = [];

  constructor(initial: Readonly<Config>) {
    this.cfg = initial;
  }

  /** The config in force now. */
  get current(): Readonly<Config> {
    return this.cfg;
  }

  /** Calls `fn` after each reload that changed something (caches keyed by config are dropped there). */
  onChange(fn: (cfg: Readonly<Config>) => void): void {
    this.listeners.push(fn);
  }

  /**
   * Takes a newly loaded (validated) config: keys that can change live ({@link isLiveKey}) are
   * applied, every other changed key keeps its running value and is reported in `needsRestart`.
   */
  reload(next: Readonly<Config>): ReloadOutcome {
    const changed = changedKeys(this.cfg, next);
    const applied = changed.filter(isLiveKey);
    const needsRestart = changed.filter((k) => !isLiveKey(k));
    if (applied.length > 0) {
      const merged = structuredClone(this.cfg) as Config;
      for (const key of applied) setPath(merged, key.split('.'), getPath(next, key.split('.')));
      this.cfg = deepFreeze(merged);
      for (const fn of this.listeners) fn(this.cfg);
    }
    return { applied, needsRestart };
  }
}

/** What a reload did: the keys applied live, and the changed keys that wait for a restart. */
export interface ReloadOutcome {
  applied: string[];
  needsRestart: string[];
}

const BOUNDARY = new Set<string>(BOUNDARY_FIELDS);
const GATEWAY_RULES = new Set(['allow', 'ask', 'deny', 'mode', 'roleCeilings']);

/**
 * Whether a changed key (dotted path) applies without a restart: `log.level`; the gateway's
 * permission rules, mode and role ceilings; an agent's `permissions` and `mode`; and the boundary
 * keys of a channel account that already exists (dmPolicy, allowFrom, groupPolicy, groups,
 * requireMention, rateLimit, pairingRole, permissionMode). Adding or removing an account or an
 * agent, and everything else, needs a restart.
 */
export function isLiveKey(key: string): boolean {
  const p = key.split('.');
  if (p[0] === 'log') return p[1] === 'level';
  if (p[0] === 'permissions') return p.length >= 2 && GATEWAY_RULES.has(p[1]!);
  if (p[0] === 'agents') return p.length >= 3 && (p[2] === 'permissions' || (p[2] === 'mode' && p.length === 3));
  if (p[0] === 'channels') return p.length >= 5 && p[2] === 'accounts' && BOUNDARY.has(p[4]!);
  return false;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The dotted paths at which two configs differ: leaves, arrays as a whole, and keys present in only one. */
export function changedKeys(a: unknown, b: unknown, path: string[] = []): string[] {
  if (isPlain(a) && isPlain(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    const out: string[] = [];
    for (const k of keys) {
      const inA = Object.hasOwn(a, k) && a[k] !== undefined;
      const inB = Object.hasOwn(b, k) && b[k] !== undefined;
      if (inA !== inB) out.push([...path, k].join('.'));
      else if (inA) out.push(...changedKeys(a[k], b[k], [...path, k]));
    }
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path.join('.')];
}

function getPath(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const k of path) cur = isPlain(cur) && Object.hasOwn(cur, k) ? cur[k] : undefined;
  return cur;
}

function setPath(o: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = o;
  for (const k of path.slice(0, -1)) {
    const next = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (!isPlain(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (value === undefined) delete cur[last];
  else cur[last] = structuredClone(value);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
