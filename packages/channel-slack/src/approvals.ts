import { type ApprovalAnswer, offersAlways, planChoiceLabel } from '@switchboard/core';
import { escapeMrkdwn } from './mrkdwn.js';

/**
 * Prefix of our buttons' action ids: `swb_approval:<allow|deny|always|edits>:<approvalId>`
 * (`edits`: approve a plan and switch to `acceptEdits`; `allow` on a plan takes its first choice).
 */
export const APPROVAL_ACTION_PREFIX = 'swb_approval';

type Choice = 'allow' | 'deny' | 'always' | 'edits';

/** A Slack message body: fallback text plus Block Kit blocks. */
export interface SlackMessageBody {
  text: string;
  blocks: Array<{ type: string; [key: string]: unknown }>;
}

/** What an approval button press asks for, from its action id; null for actions that are not ours. */
export function parseApprovalAction(actionId: string): { approvalId: string; decision: 'allow' | 'deny'; always: boolean; mode?: string } | null {
  const m = /^swb_approval:(allow|deny|always|edits):(.{1,200})$/.exec(actionId);
  if (!m) return null;
  const choice = m[1] as Choice;
  return {
    approvalId: m[2]!,
    decision: choice === 'deny' ? 'deny' : 'allow',
    always: choice === 'always',
    ...(choice === 'edits' ? { mode: 'acceptEdits' } : {}),
  };
}

/** The buttons of a request: a plan's choices and "Keep planning", else Approve / Deny (/ Always allow where a rule may be saved). */
function buttons(a: { approvalId: string; source?: string; choices?: readonly string[] }): Record<string, unknown>[] {
  if (a.choices) {
    const allow = a.choices.flatMap((c) =>
      c === 'default'
        ? [button(planChoiceLabel(c), 'allow', a.approvalId, 'primary')]
        : c === 'acceptEdits'
          ? [button(planChoiceLabel(c), 'edits', a.approvalId)]
          : [],
    );
    // A lowered choice (no button of its own) is the approval's first: plain allow takes it.
    return [...(allow.length > 0 ? allow : [button('Proceed', 'allow', a.approvalId, 'primary')]), button('Keep planning', 'deny', a.approvalId, 'danger')];
  }
  const base = [button('Approve', 'allow', a.approvalId, 'primary'), button('Deny', 'deny', a.approvalId, 'danger')];
  return offersAlways(a.source) ? [...base, button('Always allow', 'always', a.approvalId)] : base;
}

function button(text: string, choice: Choice, approvalId: string, style?: 'primary' | 'danger'): Record<string, unknown> {
  return {
    type: 'button',
    text: { type: 'plain_text', text, emoji: true },
    action_id: `${APPROVAL_ACTION_PREFIX}:${choice}:${approvalId}`,
    value: approvalId,
    ...(style ? { style } : {}),
  };
}

/** The request: what the tool wants to do, and its buttons (Approve / Deny / Always allow; a plan's choices). */
export function approvalRequestMessage(a: {
  approvalId: string;
  tool: string;
  summary: string;
  expiresAt: string;
  source?: string;
  choices?: readonly string[];
}): SlackMessageBody {
  const expires = Math.floor(Date.parse(a.expiresAt) / 1000);
  const when = Number.isFinite(expires) ? `<!date^${expires}^{time}|${escapeMrkdwn(a.expiresAt)}>` : 'soon';
  const headline = `:raised_hand: *${a.choices ? 'Plan approval' : 'Approval needed'}* — \`${escapeMrkdwn(a.tool)}\``;
  return {
    text: `Approval needed: ${escapeMrkdwn(a.tool)} — ${escapeMrkdwn(a.summary)}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n${escapeMrkdwn(a.summary).slice(0, 2800)}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `Expires at ${when}. Unanswered requests are denied.` }] },
      {
        type: 'actions',
        block_id: `${APPROVAL_ACTION_PREFIX}:${a.approvalId}`.slice(0, 255),
        elements: buttons(a),
      },
    ],
  };
}

/** How an approval ended, as its message shows it. */
export type ApprovalOutcome = 'allowed' | 'always' | 'denied' | 'closed';

const OUTCOME_LABEL: Record<ApprovalOutcome, string> = {
  allowed: ':white_check_mark: Approved',
  always: ':white_check_mark: Always allowed',
  denied: ':no_entry: Denied',
  closed: ':hourglass: Closed without an answer (expired or the turn was stopped)',
};

/** The request after its decision: no buttons, the outcome and who decided. */
export function approvalDoneMessage(tool: string, outcome: ApprovalOutcome, who: string): SlackMessageBody {
  const line = outcome === 'closed' ? `${OUTCOME_LABEL.closed} — \`${escapeMrkdwn(tool)}\`` : `${OUTCOME_LABEL[outcome]} — \`${escapeMrkdwn(tool)}\` (${who})`;
  return { text: line, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: line } }] };
}

/**
 * Names the decider of an approval for a chat: a Slack mention when we know the person's Slack id
 * (`deciders`: principal id → Slack user id), else a neutral description of the gateway's actor.
 */
export function describeDecider(by: string | undefined, deciders: ReadonlyMap<string, string>): string {
  if (!by || by === 'system') return 'decided by the gateway';
  const [kind, id = ''] = [by.slice(0, by.indexOf(':')), by.slice(by.indexOf(':') + 1)];
  if (kind === 'principal') {
    const user = deciders.get(id);
    return user ? `by <@${user}>` : 'by another person';
  }
  if (kind === 'operator') return `by operator ${escapeMrkdwn(id)}`;
  if (kind === 'hook') return `by hook ${escapeMrkdwn(id)}`;
  return `by ${escapeMrkdwn(by)}`;
}

/** The ephemeral explanation for a press that did not decide anything. */
export function refusalText(r: ApprovalAnswer, deciders: ReadonlyMap<string, string>): string {
  switch (r.outcome) {
    case 'already_decided': {
      const status =
        r.status === 'expired'
          ? 'it expired'
          : r.status === 'cancelled'
            ? 'it was cancelled because its turn ended before anyone answered'
            : `it was already ${r.status ?? 'decided'} ${describeDecider(r.decidedBy, deciders)}`;
      return `This approval is already decided: ${status}.`;
    }
    case 'forbidden':
      return `You can't answer this approval: ${escapeMrkdwn(r.reason ?? 'not allowed')}.`;
    case 'invalid':
      return `That answer does not fit this approval: ${escapeMrkdwn(r.reason ?? 'not allowed')}.`;
    case 'not_found':
      return 'This approval no longer exists.';
    default:
      return 'Done.';
  }
}
