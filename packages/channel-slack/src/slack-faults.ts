import { describeThrown, FaultBoundary, type FaultDescription } from '@switchboard/core';
import type { Logger } from 'pino';
import { describeSlackError } from './slack-errors.js';

/** A Slack failure for the fault boundary: its cause or error code, with both on the log line. */
export function describeSlackFault(err: unknown): FaultDescription {
  const d = describeSlackError(err);
  return { text: d.cause ?? d.code, fields: { code: d.code, cause: d.cause, message: messageOf(err) } };
}

/**
 * The fault boundary of one Slack account: a task that failed in one conversation (render,
 * notice, approval press, slash command, envelope) is logged with channel, account and
 * conversation, counted, and summarised in `health()`; it never ends anything else.
 */
export function slackFaultBoundary(log: Logger, account: string): FaultBoundary {
  return new FaultBoundary(log.child({ account }), describeSlackFault);
}

/** The message of any thrown value, at most 300 characters; never throws. */
export function messageOf(err: unknown): string {
  return describeThrown(err).slice(0, 300);
}
