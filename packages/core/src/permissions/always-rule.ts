import { exactRuleFor } from './exact-rule.js';
import { hostOf, type MatchKind } from './matchers.js';

// A host a `domain:` pattern can hold as written: DNS names, IPv4, bracketed IPv6.
const PLAIN_HOST = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/u;

/**
 * The rule "always allow" saves for one approved call. For a `domain` tool (`web_fetch`) it is
 * the call's domain, `web_fetch(domain:<host>)`, which also covers the host's subdomains (see
 * `matchDomain`): "always allow this domain". For every other tool, and a content without a
 * plain host, the rule that matches exactly that call ({@link exactRuleFor}).
 */
export function alwaysRuleFor(toolName: string, content: string | undefined, kind: MatchKind, workspace?: string): string {
  if (kind === 'domain' && content !== undefined) {
    const host = hostOf(content);
    if (host !== undefined && PLAIN_HOST.test(host)) return `${toolName}(domain:${host})`;
  }
  return exactRuleFor(toolName, content, kind, workspace);
}
