import { SwbError, SwbErrorCode } from '@switchboard/agent';

/** The catalogue's codes for the permission layer (see `SwbErrorCode` in `@switchboard/agent`). */
export const PermissionErrorCode = {
  /** A rule string (`Tool` / `Tool(content)`) or its content pattern is malformed. */
  RuleSyntax: SwbErrorCode.RuleSyntax,
  /** A hook definition is unusable (empty argv, bad URL, unknown event). */
  HookConfig: SwbErrorCode.HookConfig,
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
