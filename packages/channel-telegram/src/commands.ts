import type { ChannelContext, ConversationRef } from '@switchboard/core';

/** The chat commands the adapter handles itself (registered with setMyCommands). */
export const COMMANDS = [
  { command: 'new', description: 'Start a fresh session' },
  { command: 'status', description: 'Show model, mode and session status' },
  { command: 'stop', description: 'Stop the running answer' },
  { command: 'mode', description: 'Change the permission mode: /mode <mode>' },
] as const;

const NAMES = new Set<string>(COMMANDS.map((c) => c.command));
const MODES = ['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions'];

/** Whether `name` is one of the adapter's own commands (others go to the assistant as text). */
export function isOwnCommand(name: string): boolean {
  return NAMES.has(name);
}

/** The reply to someone who is not a known principal. */
export const NOT_PAIRED =
  'You are not paired yet, so commands are not available to you. Send me a message to get a pairing code, or ask the operator for access.';

/**
 * Runs one command for the sender's principal and returns the reply text. The state change is
 * done before this resolves (so a message right after `/new` lands in the fresh session).
 * `/status` shows settings and counts only: never a secret.
 */
export async function runCommand(ctx: ChannelContext, name: string, args: string, conv: ConversationRef, identity: string): Promise<string> {
  const who = await ctx.principalFor(identity);
  if (!who) return NOT_PAIRED;
  const pid = who.principalId;
  switch (name) {
    case 'new':
      await ctx.resetSession(conv, pid);
      return 'Started a new session. Earlier messages are no longer part of the conversation.';
    case 'stop':
      return (await ctx.stopRunning(conv, pid)) ? 'Stopped the running answer.' : 'Nothing is running right now.';
    case 'status': {
      const s = await ctx.sessionStatus(conv, pid);
      return [
        `Model: ${s.model}`,
        `Mode: ${s.mode}`,
        `Queue mode: ${s.queueMode}`,
        `Session size: ${s.entries} entries`,
        `Pending approvals: ${s.pendingApprovals}`,
        `Running: ${s.running ? 'yes' : 'no'}`,
      ].join('\n');
    }
    case 'mode': {
      const mode = args.split(/\s+/)[0] ?? '';
      if (!mode) {
        const s = await ctx.sessionStatus(conv, pid);
        return `Current mode: ${s.mode}. Usage: /mode <${MODES.join('|')}>`;
      }
      const r = await ctx.setMode(conv, pid, mode);
      return r.ok ? `Mode set to ${r.mode}.` : `Mode not changed: ${r.reason}`;
    }
    default:
      return `Unknown command /${name}.`;
  }
}
