import { LITERAL_PREFIX, literalPath } from './literal.js';
import type { MatchKind } from './matchers.js';
import { escapeRuleContent } from './rules.js';

// Contents whose plain pattern can only match themselves: no glob, prefix or rule-grammar
// characters, no `.`/`..` segments, no trailing `/` (which would mean "and everything below").
const PLAIN_PATH = /^(?!\.\.?(?:\/|$))[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/u;
const PLAIN_COMMAND = /^[A-Za-z0-9_./=-]+(?: [A-Za-z0-9_./=-]+)*$/u;

/**
 * The permission rule "always allow" saves for one approved call: it matches that call and no
 * other. `content` is the call's rule content (`undefined` for tools without content, whose rule
 * is the tool name). Path contents are placed in the workspace first; a content that a plain
 * pattern would widen (glob characters, a command prefix, a domain's subdomains, `.` segments)
 * is saved in the literal form `Tool(literal:<content>)`. `(`, `)` and `\` are escaped for the
 * rule grammar, so `parseRule` gives the content back unchanged.
 */
export function exactRuleFor(toolName: string, content: string | undefined, kind: MatchKind, workspace?: string): string {
  if (content === undefined) return toolName;
  let pattern: string;
  switch (kind) {
    case 'path': {
      const rel = literalPath(content, workspace);
      pattern = rel !== undefined && PLAIN_PATH.test(rel) ? rel : `${LITERAL_PREFIX}${rel === undefined || rel === '' ? content : rel}`;
      break;
    }
    case 'command':
      pattern = PLAIN_COMMAND.test(content) ? content : `${LITERAL_PREFIX}${content}`;
      break;
    case 'domain':
      pattern = `${LITERAL_PREFIX}${content}`;
      break;
    case 'exact':
      pattern = content.startsWith(LITERAL_PREFIX) ? `${LITERAL_PREFIX}${content}` : content;
      break;
  }
  return `${toolName}(${escapeRuleContent(pattern)})`;
}
