import type { WebClient } from '@slack/web-api';
import {
  autoModeLine,
  COMPACT_REFUSAL_TEXT,
  compactedText,
  contextReportLines,
  memoryCommandText,
  MODE_ORDER,
  type ChannelContext,
  type ChatCommandResult,
  type ContextReport,
  type ConversationRef,
  type PersonalUsage,
  usageLines,
  profileReply,
} from '@switchboard/core';
import type { Logger } from 'pino';
import type { ApprovalBoard } from './approval-board.js';
import { approvalDoneMessage, parseApprovalAction, refusalText } from './approvals.js';
import { blockActionsSchema, parseWith, slashCommandSchema } from './interaction-schemas.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { slackErrorCode } from './web.js';

/** What button presses and slash commands need from their channel. */
export interface InteractionDeps {
  ctx: ChannelContext;
  api: WebClient;
  board: ApprovalBoard;
  account: string;
  log: Logger;
}

const NOT_KNOWN = 'This assistant does not know you yet, so it cannot take this from you. Send it a direct message first.';

/**
 * A `block_actions` press on an approval button: the presser's principal answers the approval
 * (checked and claimed atomically by the gateway); the message then shows the outcome and who
 * decided, and a press that decides nothing gets an ephemeral explanation. Never throws.
 */
export async function handleBlockActions(deps: InteractionDeps, raw: unknown): Promise<void> {
  const parsed = parseWith(blockActionsSchema, raw);
  if (!parsed.ok) return void deps.log.warn({ problem: parsed.problem }, 'slack interaction dropped: malformed payload');
  const p = parsed.value;
  const action = p.actions?.map((a) => parseApprovalAction(a.action_id ?? '')).find((a) => a !== null);
  const user = p.user?.id;
  const channel = p.container?.channel_id ?? p.channel?.id;
  if (!action || !user || !channel) return;
  const messageTs = p.container?.message_ts ?? p.message?.ts;
  const threadTs = p.container?.thread_ts ?? p.message?.thread_ts;
  const team = p.user?.team_id ?? p.team?.id ?? '';
  const ephemeral = (text: string) =>
    deps.api.chat
      .postEphemeral({ channel, user, text, ...(threadTs ? { thread_ts: threadTs } : {}) })
      .catch((err: unknown) => deps.log.warn({ code: slackErrorCode(err) }, 'slack ephemeral not delivered'));
  try {
    const principal = await deps.ctx.people.principalFor(`slack:${team}:${user}`);
    if (!principal) return void (await ephemeral(NOT_KNOWN));
    deps.board.pressStarted(action.approvalId, principal.principalId, user);
    let decided = false;
    try {
      const r = await deps.ctx.approvals.decide(action.approvalId, action.decision, action.always, { principalId: principal.principalId }, action.mode);
      decided = r.outcome === 'decided';
      deps.log.info({ approvalId: action.approvalId, outcome: r.outcome, decision: action.decision }, 'slack approval button');
      if (!decided) return void (await ephemeral(refusalText(r, deps.board.deciders)));
      if (messageTs) {
        const outcome = r.status !== 'allowed' ? 'denied' : action.always ? 'always' : 'allowed';
        const body = approvalDoneMessage(r.tool ?? deps.board.get(action.approvalId)?.tool ?? 'tool', outcome, `by <@${user}>`);
        await deps.api.chat.update({ channel, ts: messageTs, text: body.text, blocks: body.blocks });
      }
    } finally {
      deps.board.pressEnded(action.approvalId, decided);
    }
  } catch (err) {
    deps.log.error({ err, code: slackErrorCode(err) }, 'slack approval press failed');
    await ephemeral('Something went wrong while recording your answer. Please try again.');
  }
}

export type { SlashCommand } from './interaction-schemas.js';

const usage = (command = '/switchboard', modes: readonly string[] = MODE_ORDER) =>
  `Usage: \`${command} new\` (start over), \`${command} status\`, \`${command} stop\` (stop the running answer), \`${command} mode <${modes.join('|')}>\`, \`${command} compact [instructions]\` (summarize the conversation so far), \`${command} context\` (how full the context is), \`${command} usage\` (your spend and budget).`;

/**
 * `/<command> new|status|stop|mode <m>|compact|context|usage` (e.g. `/switchboard`) for a known person, in a direct message with the app
 * (in channels every thread is its own conversation, so the commands would have nothing to act on).
 * The core runner (`ctx.commands`) does the work; this formats its result. Returns the ephemeral answer; never throws.
 */
export async function runSlashCommand(deps: InteractionDeps, raw: unknown): Promise<string> {
  const parsed = parseWith(slashCommandSchema, raw);
  if (!parsed.ok) return `This command could not be read (${parsed.problem}).`;
  const c = parsed.value;
  const [sub = '', ...args] = (c.text ?? '').trim().split(/\s+/).filter(Boolean);
  if (!c.user_id || !c.channel_id) return 'This command needs a user and a channel.';
  if (!c.channel_id.startsWith('D')) return 'Use these commands in your direct message with the assistant: in channels, every thread is its own conversation.';
  try {
    const conversation: ConversationRef = { channel: 'slack', account: deps.account, id: c.channel_id, kind: 'dm' };
    // `reset` is Slack's own alias of `new`.
    const name = sub.toLowerCase() === 'reset' ? 'new' : sub;
    const r = await deps.ctx.commands.run({ name, args: args.join(' '), conversation, identity: `slack:${c.team_id ?? ''}:${c.user_id}` });
    return slashReply(r, c.command);
  } catch (err) {
    deps.log.error({ err }, 'slack slash command failed');
    return 'The command failed. Please try again.';
  }
}

/** A command's result in Slack's words (mrkdwn). */
function slashReply(r: ChatCommandResult, command: string | undefined): string {
  switch (r.outcome) {
    case 'not_paired':
      return NOT_KNOWN;
    case 'unknown':
      return usage(command);
    case 'reset':
      return 'Started a new session: the next message begins with an empty history.';
    case 'stopped':
      return 'Stopped the running answer.';
    case 'idle':
      return 'Nothing is running right now.';
    case 'status': {
      const s = r.status;
      return [
        `*Session* \`${s.sessionId}\``,
        `Model: \`${escapeMrkdwn(s.model)}\` · Mode: \`${s.mode}\` · Queue: \`${s.queueMode}\``,
        `Entries: ${s.entries} · Pending approvals: ${s.pendingApprovals} · ${s.running ? 'Answering now' : 'Idle'}`,
        ...(s.auto ? [escapeMrkdwn(autoModeLine(s.auto))] : []),
      ].join('\n');
    }
    case 'usage':
      return usage(command, r.modes);
    case 'set':
      return `Mode set to \`${r.mode}\`.`;
    case 'refused':
      return `Mode not changed: ${escapeMrkdwn(r.reason)}`;
    case 'compacted':
      return compactedText(r.tokensBefore, r.tokensAfter);
    case 'not_compacted':
      return COMPACT_REFUSAL_TEXT[r.reason];
    case 'report':
      return contextReply(r.report);
    case 'spend':
      return usageText(r.usage);
    case 'memories':
    case 'forgotten':
    case 'not_forgotten':
    case 'memory_unavailable':
      return escapeMrkdwn(memoryCommandText(r));
    case 'profile':
    case 'profile_refused':
    case 'profile_unavailable':
      return escapeMrkdwn(profileReply(r));
  }
}

/** `/context` in mrkdwn (core's words): the size against the window, the last compaction, the consumers that fill the request. */
function contextReply(c: ContextReport): string {
  const w = contextReportLines(c);
  return [
    `*Context* ${w.size} · model \`${escapeMrkdwn(w.model)}\``,
    ...w.details,
    `Top consumers: ${w.consumers.map((k) => `${k.label} ${k.tokens}`).join(' · ')}`,
  ].join('\n');
}

/** `/usage` in mrkdwn (core's words): one line per period — spent tokens and USD, the budget that applies, when it resets. */
function usageText(u: PersonalUsage): string {
  const w = usageLines(u);
  const periods = w.periods.map((p) => {
    const whose = p.role !== undefined ? ` (role \`${escapeMrkdwn(p.role)}\`)` : '';
    return `${p.name}: *${p.tokens}*, ${p.usd} · ${p.budget}${whose} · resets ${escapeMrkdwn(p.resets)}`;
  });
  return [`*${w.title}*`, ...periods].join('\n');
}
