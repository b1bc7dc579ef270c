/**
 * Which environment variables a config file's values come from (`${VAR}` references), by config
 * path, so that a message can say "set from TELEGRAM_BOT_TOKEN" without ever showing the value.
 */
const sources = new WeakMap<object, Map<string, string[]>>();

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;

/** Walks the raw (not yet interpolated) config and records every `${VAR}` by its path. */
export function collectEnvSources(raw: unknown, path: string[] = [], out = new Map<string, string[]>()): Map<string, string[]> {
  if (typeof raw === 'string') {
    const names = [...raw.matchAll(REF)].map((m) => m[1]!);
    if (names.length > 0) out.set(path.join('.'), names);
  } else if (Array.isArray(raw)) {
    raw.forEach((v, i) => collectEnvSources(v, [...path, String(i)], out));
  } else if (raw && typeof raw === 'object') {
    for (const [k, v] of Object.entries(raw)) collectEnvSources(v, [...path, k], out);
  }
  return out;
}

/** Remembers the sources of a parsed config object. */
export function rememberEnvSources(cfg: object, map: Map<string, string[]>): void {
  sources.set(cfg, map);
}

/** The variable(s) behind a config value, e.g. `TELEGRAM_BOT_TOKEN`; undefined if written literally. */
export function envSourceOf(cfg: object, path: readonly string[]): string | undefined {
  const names = sources.get(cfg)?.get(path.join('.'));
  return names && names.length > 0 ? names.join(', ') : undefined;
}
