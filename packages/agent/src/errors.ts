/**
 * The one catalogue of the gateway's stable error codes (`SWB_E_*`), in the manner of Fastify's
 * `FST_ERR_*`: every code any package throws is an entry here, with a default message and
 * whether the same operation may succeed later unchanged. docs/errors.md documents each entry
 * (test/error-catalogue.test.ts fails when one is missing, and when a `SWB_E_` string is written
 * anywhere else in source). Throw `new SwbError(SwbErrorCode.X, message?)` or a subclass;
 * compare with `isSwbError(err, SwbErrorCode.X)`, never by reading `.code` by hand.
 *
 * @module
 */

/** One catalogue entry. */
export interface SwbErrorInfo {
  readonly code: `SWB_E_${string}`;
  /** The default message: what went wrong, for a log line or a person. */
  readonly message: string;
  /** True when the same operation may succeed later unchanged (after a wait); false when something must change first. */
  readonly retryable: boolean;
}

const CATALOGUE = {
  // Gateway and channels
  ShuttingDown: { code: 'SWB_E_SHUTTING_DOWN', retryable: true, message: 'The gateway is shutting down; send the message again shortly.' },
  NotReady: { code: 'SWB_E_NOT_READY', retryable: true, message: 'The channel account is still starting; deliver the event again shortly.' },
  UnknownSender: { code: 'SWB_E_UNKNOWN_SENDER', retryable: false, message: 'A direct message needs a known sender.' },
  UnknownAgent: { code: 'SWB_E_UNKNOWN_AGENT', retryable: false, message: 'The message addresses an agent this gateway does not have.' },
  InboxTooLarge: { code: 'SWB_E_INBOX_TOO_LARGE', retryable: false, message: 'The inbound item is larger than limits.inboxMaxBytes; it is not stored.' },
  Config: { code: 'SWB_E_CONFIG', retryable: false, message: 'The config is invalid.' },
  StorageUnavailable: {
    code: 'SWB_E_STORAGE_UNAVAILABLE',
    retryable: true,
    message: 'The database is unreachable right now; send the message again shortly.',
  },
  LeaseLost: {
    code: 'SWB_E_LEASE_LOST',
    retryable: false,
    message: 'Another replica took the lease this write presented; the write was refused and changed nothing.',
  },
  Startup: { code: 'SWB_E_STARTUP', retryable: false, message: 'The gateway could not start with this config.' },
  InstanceLocked: { code: 'SWB_E_INSTANCE_LOCKED', retryable: false, message: 'Another Switchboard gateway is already running on this data dir.' },
  // Permissions
  RuleSyntax: { code: 'SWB_E_RULE_SYNTAX', retryable: false, message: 'A permission rule is malformed.' },
  HookConfig: { code: 'SWB_E_HOOK_CONFIG', retryable: false, message: 'A hook definition is unusable.' },
  HookRun: { code: 'SWB_E_HOOK_RUN', retryable: false, message: 'A hook produced no usable answer.' },
  RealPath: { code: 'SWB_E_REAL_PATH', retryable: false, message: "The path's real location could not be found." },
  // Patterns
  Regex: { code: 'SWB_E_REGEX', retryable: false, message: 'The pattern cannot run on the linear-time regex engine.' },
  RegexStopped: { code: 'SWB_E_REGEX_STOPPED', retryable: false, message: 'The regex worker was stopped before the work was done.' },
  // Workspace and file tools
  PathEscape: { code: 'SWB_E_PATH_ESCAPE', retryable: false, message: 'The path would leave the workspace.' },
  FileNotFound: { code: 'SWB_E_FILE_NOT_FOUND', retryable: false, message: 'The file does not exist.' },
  FileKind: { code: 'SWB_E_FILE_KIND', retryable: false, message: 'The path is a directory where a file was expected, or the other way round.' },
  FileTooLarge: { code: 'SWB_E_FILE_TOO_LARGE', retryable: false, message: 'The file is larger than the tool allows.' },
  FileBinary: { code: 'SWB_E_FILE_BINARY', retryable: false, message: 'The file looks binary; the file tools work on text only.' },
  HardLink: { code: 'SWB_E_HARD_LINK', retryable: false, message: 'The file has more than one hard link, so it cannot be written.' },
  EditNoMatch: { code: 'SWB_E_EDIT_NO_MATCH', retryable: false, message: 'old_string was not found in the file.' },
  EditAmbiguous: { code: 'SWB_E_EDIT_AMBIGUOUS', retryable: false, message: 'old_string occurs more than once in the file.' },
  ToolInput: { code: 'SWB_E_TOOL_INPUT', retryable: false, message: "The tool's input is unusable." },
  Workspace: { code: 'SWB_E_WORKSPACE', retryable: false, message: 'The workspace directory is missing or unreadable.' },
  Fs: { code: 'SWB_E_FS', retryable: false, message: 'The file system refused the operation.' },
  Aborted: { code: 'SWB_E_ABORTED', retryable: false, message: 'The tool was stopped before it finished.' },
  // MCP tools
  McpUnavailable: { code: 'SWB_E_MCP_UNAVAILABLE', retryable: true, message: 'The MCP server is not available.' },
  McpTimeout: { code: 'SWB_E_MCP_TIMEOUT', retryable: true, message: 'The MCP tool call timed out.' },
  McpCall: { code: 'SWB_E_MCP_CALL', retryable: false, message: 'The MCP tool call failed.' },
  // Model calls (ModelError; the suffix is the ModelErrorKind)
  ModelRateLimit: { code: 'SWB_E_MODEL_RATE_LIMIT', retryable: true, message: 'The model provider is rate limiting requests.' },
  ModelSpendLimit: { code: 'SWB_E_MODEL_SPEND_LIMIT', retryable: false, message: "The model provider account's spend limit is reached." },
  ModelOverloaded: { code: 'SWB_E_MODEL_OVERLOADED', retryable: true, message: 'The model provider is overloaded.' },
  ModelServer: { code: 'SWB_E_MODEL_SERVER', retryable: true, message: 'The model provider had a server error.' },
  ModelConnection: { code: 'SWB_E_MODEL_CONNECTION', retryable: true, message: 'The model provider could not be reached.' },
  ModelStalled: { code: 'SWB_E_MODEL_STALLED', retryable: true, message: 'The model stream stalled.' },
  ModelTruncated: { code: 'SWB_E_MODEL_TRUNCATED', retryable: true, message: 'The model stream ended before the response was complete.' },
  ModelPromptTooLong: { code: 'SWB_E_MODEL_PROMPT_TOO_LONG', retryable: false, message: "The conversation is longer than the model's context window." },
  ModelInvalidRequest: { code: 'SWB_E_MODEL_INVALID_REQUEST', retryable: false, message: 'The model provider refused the request as invalid.' },
  ModelAuth: { code: 'SWB_E_MODEL_AUTH', retryable: false, message: 'The model provider refused the API key.' },
  ModelNoModel: { code: 'SWB_E_MODEL_NO_MODEL', retryable: false, message: 'No model is configured.' },
  ModelAborted: { code: 'SWB_E_MODEL_ABORTED', retryable: false, message: 'The model call was stopped.' },
} as const satisfies Record<string, SwbErrorInfo>;

type Catalogue = typeof CATALOGUE;

/** Every stable error code by name: `SwbErrorCode.ShuttingDown` is `'SWB_E_SHUTTING_DOWN'`. */
export const SwbErrorCode = Object.freeze(Object.fromEntries(Object.entries(CATALOGUE).map(([name, info]) => [name, info.code]))) as {
  readonly [Name in keyof Catalogue]: Catalogue[Name]['code'];
};

/** One of the catalogue's codes. */
export type SwbErrorCode = Catalogue[keyof Catalogue]['code'];

/** The whole catalogue, keyed by code (frozen; docs/errors.md has an entry for each). */
export const SWB_ERRORS: ReadonlyMap<SwbErrorCode, SwbErrorInfo> = new Map(Object.values(CATALOGUE).map((info) => [info.code, Object.freeze({ ...info })]));

/** True when `value` is one of the catalogue's codes. */
export function isSwbErrorCode(value: unknown): value is SwbErrorCode {
  return typeof value === 'string' && SWB_ERRORS.has(value as SwbErrorCode);
}

/** The catalogue entry of `code`. */
export function swbErrorInfo(code: SwbErrorCode): SwbErrorInfo {
  const info = SWB_ERRORS.get(code);
  if (!info) throw new TypeError(`${String(code)} is not in the error catalogue`);
  return info;
}

/** A programmer or system error with a stable `SWB_E_*` code from the catalogue. */
export class SwbError extends Error {
  readonly code: SwbErrorCode;
  /** `message` defaults to the catalogue's message for `code`. */
  constructor(code: SwbErrorCode, message?: string, options?: { cause?: unknown }) {
    super(message ?? SWB_ERRORS.get(code)?.message ?? String(code), options);
    this.name = 'SwbError';
    this.code = code;
  }
  /** Whether the catalogue marks this code retryable. */
  get retryable(): boolean {
    return SWB_ERRORS.get(this.code)?.retryable ?? false;
  }
}

/**
 * True when `err` is an error carrying a catalogue code (and, given `code`, that one). Total: any
 * thrown value, a throwing getter or a revoked proxy is simply `false`. It also recognises an
 * error of another copy of this module (it reads the code rather than trusting `instanceof`).
 */
export function isSwbError<C extends SwbErrorCode>(err: unknown, code?: C): err is SwbError & { readonly code: C } {
  try {
    if (!(err instanceof Error)) return false;
    const actual = (err as { code?: unknown }).code;
    return isSwbErrorCode(actual) && (code === undefined || actual === code);
  } catch {
    return false;
  }
}

/** Why a model call failed, classified so the loop can decide whether to retry. */
export type ModelErrorKind =
  | 'rate_limit'
  | 'spend_limit'
  | 'overloaded'
  | 'server'
  | 'connection'
  | 'stalled'
  | 'truncated'
  | 'prompt_too_long'
  | 'invalid_request'
  | 'auth'
  | 'no_model'
  | 'aborted';

/** The code of each model failure kind (`SWB_E_MODEL_` and the kind upper-cased). */
export const MODEL_ERROR_CODES: Readonly<Record<ModelErrorKind, SwbErrorCode>> = Object.freeze({
  rate_limit: SwbErrorCode.ModelRateLimit,
  spend_limit: SwbErrorCode.ModelSpendLimit,
  overloaded: SwbErrorCode.ModelOverloaded,
  server: SwbErrorCode.ModelServer,
  connection: SwbErrorCode.ModelConnection,
  stalled: SwbErrorCode.ModelStalled,
  truncated: SwbErrorCode.ModelTruncated,
  prompt_too_long: SwbErrorCode.ModelPromptTooLong,
  invalid_request: SwbErrorCode.ModelInvalidRequest,
  auth: SwbErrorCode.ModelAuth,
  no_model: SwbErrorCode.ModelNoModel,
  aborted: SwbErrorCode.ModelAborted,
});

/** A failed model call. `message` is safe to show a person: it never carries a secret or an upstream body. */
export class ModelError extends SwbError {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  /** Server-requested delay before a retry (retry-after-ms / retry-after), if any. */
  readonly retryAfterMs: number | undefined;
  /** True when some text had already streamed before the failure. */
  readonly streamedText: boolean;
  constructor(kind: ModelErrorKind, message: string, opts: { status?: number; retryAfterMs?: number; streamedText?: boolean; cause?: unknown } = {}) {
    super(MODEL_ERROR_CODES[kind], message, { cause: opts.cause });
    this.name = 'ModelError';
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.streamedText = opts.streamedText ?? false;
  }
}
