import {
  CONTEXT_CONSUMERS,
  sharePercent,
  utcMinute,
  type ChannelCommands,
  type ChatCommandResult,
  type ContextReport,
  type ConversationRef,
  describeInstant,
  type PersonalUsage,
} from '@switchboard/core';

/** The reply to someone who is not a known principal. */
export const NOT_PAIRED =
  'You are not paired yet, so commands are not available to you. Send me a message to get a pairing code, or ask the operator for access.';

/**
 * Runs one command (the core runner: `ctx.commands`) for the sender and returns the reply text.
 * The state change is done before this resolves (so a message right after `/new` lands in the
 * fresh session). `/status` shows settings and counts only: never a secret.
 */
export async function runCommand(commands: ChannelCommands, name: string, args: string, conv: ConversationRef, identity: string): Promise<string> {
  return commandReply(await commands.run({ name, args, conversation: conv, identity }));
}

/** A command's result in Telegram's words (plain text). */
export function commandReply(r: ChatCommandResult): string {
  switch (r.outcome) {
    case 'not_paired':
      return NOT_PAIRED;
    case 'unknown':
      return `Unknown command /${r.command}.`;
    case 'reset':
      return 'Started a new session. Earlier messages are no longer part of the conversation.';
    case 'stopped':
      return 'Stopped the running answer.';
    case 'idle':
      return 'Nothing is running right now.';
    case 'status': {
      const s = r.status;
      return [
        `Model: ${s.model}`,
        `Mode: ${s.mode}`,
        `Queue mode: ${s.queueMode}`,
        `Session size: ${s.entries} entries`,
        `Pending approvals: ${s.pendingApprovals}`,
        `Running: ${s.running ? 'yes' : 'no'}`,
      ].join('\n');
    }
    case 'usage':
      return `Current mode: ${r.current}. Usage: /mode <${r.modes.join('|')}>`;
    case 'set':
      return `Mode set to ${r.mode}.`;
    case 'refused':
      return `Mode not changed: ${r.reason}`;
    case 'report':
      return contextReply(r.report);
    case 'compacted':
      return `Compacted the conversation: about ${r.tokensBefore} → ${r.tokensAfter} tokens. The full history stays in the transcript.`;
    case 'not_compacted':
      return COMPACT_REFUSALS[r.reason];
    case 'spend':
      return usageReply(r.usage);
  }
}

/** Why `/compact` did nothing, in Telegram's words. */
const COMPACT_REFUSALS = {
  busy: 'Not compacted: an answer is in progress. Try again when it has finished.',
  nothing: 'Not compacted: the conversation is still short.',
  admins_only: 'Not compacted: in a group, only admins can compact the shared conversation.',
  failed: 'Not compacted: the summary could not be written. Nothing changed; try again later.',
  unavailable: 'Compaction is not available here.',
} as const;

/** `/context` in plain text: the size against the window, the last compaction, the consumers that fill the request. */
function contextReply(c: ContextReport): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const lines = [
    `Context: ${n(c.tokens)} of ${n(c.window)} tokens (${sharePercent(c.tokens, c.window)}) · model ${c.model}`,
    `Window: ${n(c.contextWindow)} tokens, ${n(c.contextWindow - c.window)} kept for the answer`,
    c.lastCompaction
      ? `Last compaction: ${utcMinute(c.lastCompaction.at)} (${c.lastCompaction.trigger}), ${n(c.lastCompaction.tokensBefore)} → ${n(c.lastCompaction.tokensAfter)} tokens`
      : 'Last compaction: never',
  ];
  if (c.clearedResults > 0) lines.push(`Cleared tool results: ${c.clearedResults}`);
  lines.push('Top consumers:');
  for (const k of c.consumers.filter((x) => x.tokens > 0)) lines.push(`  ${CONTEXT_CONSUMERS.get(k.name) ?? k.name}: ${n(k.tokens)}`);
  return lines.join('\n');
}

const tokens = (n: number): string => `${n.toLocaleString('en-US')} tokens`;
const usd = (n: number): string => `$${n.toFixed(4)}`;

/** `/usage` in plain text: one line per period — spent tokens and USD, the budget that applies, when it resets. */
export function usageReply(u: PersonalUsage): string {
  const lines = ['Your usage:'];
  for (const p of u.periods) {
    const name = p.period === 'day' ? 'Today' : 'This month';
    const limit = p.limit
      ? [p.limit.tokens !== undefined ? tokens(p.limit.tokens) : null, p.limit.usd !== undefined ? `$${p.limit.usd.toFixed(2)}` : null]
          .filter(Boolean)
          .join(' / ')
      : null;
    const whose = p.limit?.scope === 'role' ? ` (role ${p.limit.id})` : '';
    const budget = limit ? `budget ${limit}${whose}` : 'no budget';
    lines.push(`${name}: ${tokens(p.tokens)}, ${usd(p.usd)} of ${budget}; resets ${describeInstant(new Date(p.resetsAt), u.timezone)}`);
  }
  return lines.join('\n');
}
