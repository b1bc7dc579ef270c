import {
  autoModeLine,
  COMPACT_REFUSAL_TEXT,
  compactedText,
  contextReportLines,
  memoryCommandText,
  type ChannelCommands,
  type ChatCommandResult,
  type ContextReport,
  type ConversationRef,
  type PersonalUsage,
  usageLines,
  profileReply,
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
        ...(s.auto ? [autoModeLine(s.auto)] : []),
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
      return compactedText(r.tokensBefore, r.tokensAfter);
    case 'not_compacted':
      return COMPACT_REFUSAL_TEXT[r.reason];
    case 'spend':
      return usageReply(r.usage);
    case 'memories':
    case 'forgotten':
    case 'not_forgotten':
    case 'memory_unavailable':
      return memoryCommandText(r);
    case 'profile':
    case 'profile_refused':
    case 'profile_unavailable':
      return profileReply(r);
  }
}

/** `/context` in plain text (core's words): the size against the window, the last compaction, the consumers that fill the request. */
function contextReply(c: ContextReport): string {
  const w = contextReportLines(c);
  return [`Context: ${w.size} · model ${w.model}`, ...w.details, 'Top consumers:', ...w.consumers.map((k) => `  ${k.label}: ${k.tokens}`)].join('\n');
}

/** `/usage` in plain text (core's words): one line per period — spent tokens and USD, the budget that applies, when it resets. */
export function usageReply(u: PersonalUsage): string {
  const w = usageLines(u);
  const periods = w.periods.map((p) => `${p.name}: ${p.tokens}, ${p.usd} of ${p.budget}${p.role !== undefined ? ` (role ${p.role})` : ''}; resets ${p.resets}`);
  return [`${w.title}:`, ...periods].join('\n');
}
