import { parseDocument } from 'yaml';
import { z } from 'zod';

/** A skill's name: lower-case letters, digits and single hyphens, 1–64 characters (`deploy-checklist`). */
export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/u;
/** The longest name and description a skill may have. */
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
/** The most entries `allowed-tools` may list. */
export const ALLOWED_TOOLS_MAX = 64;
/** One `allowed-tools` entry: a tool name, a `*` pattern (`mcp__github__*`) or a `group:*` shorthand. */
const TOOL_PATTERN = /^(?:group:[a-z]+|[A-Za-z0-9_*-]{1,128})$/u;
/** Keys that would reach an object's prototype if anything copied them: refused, never ignored. */
const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype'];

/** What a `SKILL.md`'s front matter says (other keys, such as `license`, are ignored). */
export interface SkillMeta {
  name: string;
  description: string;
  /** The tools the session may use while the skill is in use; absent: the skill does not narrow. */
  allowedTools?: string[];
}

/** A parsed `SKILL.md`: its front matter and the instructions after it. */
export interface ParsedSkill {
  meta: SkillMeta;
  /** The Markdown after the front matter (leading blank lines dropped). */
  body: string;
}

const toolList = z
  .union([
    z.array(z.string()),
    // `allowed-tools: read_file, list_files` (a comma- or space-separated string, as Claude Code writes it).
    z.string().transform((s) => s.split(/[\s,]+/u).filter((t) => t !== '')),
  ])
  .pipe(z.array(z.string().regex(TOOL_PATTERN, 'a tool name, a "*" pattern or a group:* shorthand')).max(ALLOWED_TOOLS_MAX));

const metaSchema = z.looseObject({
  name: z.string().max(SKILL_NAME_MAX).regex(SKILL_NAME, 'lower-case letters, digits and single hyphens (e.g. deploy-checklist)'),
  description: z
    .string()
    .max(SKILL_DESCRIPTION_MAX)
    .refine((s) => s.trim() !== '', 'must not be empty'),
  'allowed-tools': toolList.optional(),
});

/** Why a `SKILL.md` was refused (one line, names the field). */
export type SkillParse = { ok: true; skill: ParsedSkill } | { ok: false; reason: string };

const FENCE = /^---[ \t]*$/u;

/**
 * Parses a `SKILL.md`: a `---` line first, YAML front matter (a real YAML parser: no aliases, no
 * merge keys, unique keys), a closing `---` line, then the body. Total: any text gives a result,
 * never a throw; the reason names the field that is wrong.
 */
export function parseSkillFile(text: string): SkillParse {
  try {
    return parse(text);
  } catch (err) {
    return { ok: false, reason: `could not be parsed (${err instanceof Error ? err.name : typeof err})` };
  }
}

function parse(text: string): SkillParse {
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split(/\r?\n/u);
  if (!FENCE.test(lines[0] ?? '')) return { ok: false, reason: 'front matter missing: SKILL.md must start with a "---" line' };
  const close = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (close === -1) return { ok: false, reason: 'front matter not closed: no second "---" line' };
  const doc = parseDocument(lines.slice(1, close).join('\n'), { uniqueKeys: true, merge: false, schema: 'core', prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError) return { ok: false, reason: `front matter is not valid YAML: ${yamlError.message.split('\n')[0]}` };
  const data: unknown = doc.toJS({ maxAliasCount: 0 });
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, reason: 'front matter must be a YAML mapping (name, description)' };
  // Checked on the parser's own output: a copy (zod's included) would turn `__proto__` into a prototype.
  const hostile = HOSTILE_KEYS.find((key) => Object.hasOwn(data, key));
  if (hostile !== undefined) return { ok: false, reason: `front matter field ${hostile}: this key is not allowed` };
  const parsed = metaSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `front matter field ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` };
  }
  const allowed = parsed.data['allowed-tools'];
  const meta: SkillMeta = { name: parsed.data.name, description: parsed.data.description, ...(allowed ? { allowedTools: [...new Set(allowed)] } : {}) };
  const body = lines
    .slice(close + 1)
    .join('\n')
    .replace(/^\s*\n/u, '');
  return { ok: true, skill: { meta, body } };
}
