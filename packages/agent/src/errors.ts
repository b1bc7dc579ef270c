/** A programmer or system error with a stable `SWB_E_*` code, in the manner of Fastify's FST_ERR_*. */
export class SwbError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SwbError';
    this.code = code;
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

const RETRYABLE: ReadonlySet<ModelErrorKind> = new Set(['rate_limit', 'overloaded', 'server', 'connection', 'stalled', 'truncated']);

/** A failed model call. `message` is safe to show a person: it never carries a secret or an upstream body. */
export class ModelError extends SwbError {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  /** Server-requested delay before a retry (retry-after-ms / retry-after), if any. */
  readonly retryAfterMs: number | undefined;
  /** True when some text had already streamed before the failure. */
  readonly streamedText: boolean;
  constructor(kind: ModelErrorKind, message: string, opts: { status?: number; retryAfterMs?: number; streamedText?: boolean; cause?: unknown } = {}) {
    super(`SWB_E_MODEL_${kind.toUpperCase()}`, message, { cause: opts.cause });
    this.name = 'ModelError';
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.streamedText = opts.streamedText ?? false;
  }
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}
