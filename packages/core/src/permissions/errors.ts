import { SwbError } from '@switchboard/agent';

/** Stable codes of the errors the permission layer throws. */
export const PermissionErrorCode = {
  /** A rule string (`Tool` / `Tool(content)`) or its content pattern is malformed. */
  RuleSyntax: 'SWB_E_RULE_SYNTAX',
  /** A hook definition is unusable (empty argv, bad URL, unknown event). */
  HookConfig: 'SWB_E_HOOK_CONFIG',
} as const;

/** A malformed permission rule. `rule` is the offending text; `message` says what is wrong and where. */
export class RuleSyntaxError extends SwbError {
  readonly rule: string;
  constructor(rule: string, message: string, options?: { cause?: unknown }) {
    super(PermissionErrorCode.RuleSyntax, `invalid permission rule ${JSON.stringify(rule)}: ${message}`, options);
    this.name = 'RuleSyntaxError';
    this.rule = rule;
  }
}
