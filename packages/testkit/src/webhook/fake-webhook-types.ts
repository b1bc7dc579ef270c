/** A message as a platform POSTs it to `/channels/webhook/<account>` (loosely typed, so tests can send bad ones). */
export interface WebhookMessage {
  id: string;
  sender: { id: string; name?: string; isBot?: boolean };
  conversation: { id: string; kind: 'dm' | 'room'; thread?: string };
  text: string;
  mentioned?: boolean;
  [extra: string]: unknown;
}

/** How `send` / `decide` sign and shape one request; every field defaults to a correct request. */
export interface WebhookSendOptions {
  /** Seconds added to the current time for `X-Switchboard-Timestamp` (negative: in the past). */
  timestampSkewSec?: number;
  /** Sign with this secret instead of the platform's. */
  secret?: string;
  /** Use this `X-Switchboard-Signature` value verbatim. */
  signature?: string;
  /** Send this body instead of the signed one (the signature stays that of the original). */
  tamper?: (signedBody: string) => string;
  /** Sign and send this exact text instead of the JSON of the payload (malformed JSON). */
  rawBody?: string;
  /** Leave out the signature and timestamp headers. */
  unsigned?: boolean;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The gateway's answer to a platform request. */
export interface WebhookSendResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
  json: any;
  text: string;
}

/** One callback the gateway POSTed to the platform. */
export interface ReceivedCallback {
  seq: number;
  receivedAt: number;
  /** The parsed JSON body (`{}` when it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
  body: Record<string, any>;
  rawBody: string;
  /** Lower-cased request headers (the signature header is replaced by `[checked]`). */
  headers: Record<string, string>;
  /** Whether the signature matched the raw body under the platform's secret. */
  verified: boolean;
  /** The status the platform answered with. */
  status: number;
}

/** Options for {@link startWebhookPlatform}. */
export interface WebhookPlatformOptions {
  /** The account's shared secret (default `CANARY_WEBHOOK_SECRET`). */
  secret?: string;
  /** The gateway account this platform talks to (default `main`). */
  account?: string;
}

/** One request the platform sent to the gateway, as it went over the wire. */
export interface SentRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}
