import { createHash } from 'node:crypto';

const MAX = 64;

/** Replaces every character outside `[a-zA-Z0-9_-]` with `_`. */
export function sanitizeToolNamePart(part: string): string {
  const s = part.replace(/[^a-zA-Z0-9_-]/g, '_');
  return s.length > 0 ? s : '_';
}

/**
 * The model-facing name of MCP tool `tool` of server `server`: `mcp__<server>__<tool>`, sanitized to
 * `[a-zA-Z0-9_-]{1,64}`. Names too long are cut and end in a short hash of the full name, so
 * distinct tools stay distinct; `taken` names get a numeric suffix.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  let name = `mcp__${sanitizeToolNamePart(server)}__${sanitizeToolNamePart(tool)}`;
  if (name.length > MAX) {
    const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
    name = `${name.slice(0, MAX - 9)}_${hash}`;
  }
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = `${name.slice(0, MAX - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
