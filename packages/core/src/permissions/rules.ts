import { RuleSyntaxError } from './errors.js';

/**
 * A parsed permission rule: `ToolName` (every call of the tool) or `ToolName(content)` (calls whose
 * rule content — a path, a command, a domain — matches `content`).
 */
export interface PermissionRule {
  /** Tool name, an MCP server prefix (`mcp__github`) or a `*` wildcard (`mcp__github__*`). */
  tool: string;
  /** Content pattern, unescaped. Absent for a rule that covers the whole tool. */
  content?: string;
}

// Tool names as the Anthropic API allows them, plus `*` for wildcards.
const TOOL_NAME = /^[A-Za-z0-9_*-]+$/u;

/**
 * Parses `ToolName` or `ToolName(content)`. Inside the content, `\(`, `\)` and `\\` stand for a
 * literal parenthesis or backslash; balanced unescaped parentheses are accepted too
 * (`exec(echo (hi))`). Surrounding whitespace is ignored.
 *
 * @throws {RuleSyntaxError} for an empty or invalid tool name, unbalanced parentheses, a
 *   dangling or unknown escape, or characters after the closing `)`.
 */
export function parseRule(text: string): PermissionRule {
  const s = text.trim();
  const open = s.indexOf('(');
  const tool = open === -1 ? s : s.slice(0, open);
  if (tool === '') throw new RuleSyntaxError(text, 'the tool name is empty (expected Tool or Tool(content))');
  if (!TOOL_NAME.test(tool)) {
    const bad = [...tool].find((ch) => !TOOL_NAME.test(ch)) ?? '';
    const hint = bad === ')' ? ' (a ")" without a matching "(")' : '';
    throw new RuleSyntaxError(
      text,
      `the tool name ${JSON.stringify(tool)} contains ${JSON.stringify(bad)}${hint}; tool names use letters, digits, "_", "-" and "*"`,
    );
  }
  if (open === -1) return { tool };

  let content = '';
  let depth = 0;
  for (let i = open + 1; i < s.length; i++) {
    const ch = s.charAt(i);
    if (ch === '\\') {
      const next = s.charAt(i + 1);
      if (next === '') throw new RuleSyntaxError(text, 'the content ends with a lone "\\" (write \\\\ for a backslash)');
      if (next !== '(' && next !== ')' && next !== '\\') {
        throw new RuleSyntaxError(text, `unknown escape "\\${next}" at position ${i + 1}; only \\(, \\) and \\\\ are escapes`);
      }
      content += next;
      i++;
    } else if (ch === '(') {
      depth++;
      content += ch;
    } else if (ch === ')') {
      if (depth === 0) {
        const rest = s.slice(i + 1);
        if (rest !== '') {
          throw new RuleSyntaxError(text, `unexpected ${JSON.stringify(rest)} after the closing ")" at position ${i + 1}`);
        }
        return { tool, content };
      }
      depth--;
      content += ch;
    } else {
      content += ch;
    }
  }
  throw new RuleSyntaxError(text, 'unbalanced parentheses: the "(" after the tool name is never closed');
}

/** Escapes `(`, `)` and `\` so that {@link parseRule} gives the content back unchanged. */
export function escapeRuleContent(content: string): string {
  return content.replace(/[()\\]/gu, (ch) => `\\${ch}`);
}

/**
 * Prints a rule in canonical form: `Tool`, or `Tool(content)` with `(`, `)` and `\` escaped.
 * `parseRule(printRule(r))` deep-equals `r`, and `printRule(parseRule(s)) === s` for canonical `s`.
 */
export function printRule(rule: PermissionRule): string {
  return rule.content === undefined ? rule.tool : `${rule.tool}(${escapeRuleContent(rule.content)})`;
}

/** Whether `text` parses as a rule; the error message when it does not. */
export function checkRuleSyntax(text: string): { ok: true; rule: PermissionRule } | { ok: false; message: string } {
  try {
    return { ok: true, rule: parseRule(text) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
