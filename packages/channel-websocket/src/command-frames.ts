import type { ChannelCommands, ChatCommandResult, ConversationRef } from '@switchboard/core';
import type { ClientFrame, CommandResultFrame, ServerFrame } from './frames.js';

/** Commands whose answer has a frame type of its own (docs/protocol.md); the others answer `command_result`. */
const OWN_FRAME: ReadonlyMap<string, CommandResultFrame['type']> = new Map([
  ['context', 'context'],
  ['usage', 'usage'],
  ['compact', 'compacted'],
]);

/** A command frame's name as the runner knows it: without its slash, lower case. */
export function commandName(raw: string): string {
  return (raw.startsWith('/') ? raw.slice(1) : raw).toLowerCase();
}

/** The error frame for a name that is not a command. */
function unknownCommand(name: string, known: readonly string[]): ServerFrame {
  return {
    type: 'error',
    code: 'unknown_command',
    message: `Unknown command ${JSON.stringify(name).slice(0, 40)}: expected one of ${known.join(', ')}.`,
  };
}

/**
 * The frame that answers a command's result. Errors: `not_paired`, `unknown_command`, and
 * `<command>_refused` (with the reason) for a refusal. `/new` and `/mode <m>` answer the frames
 * their own client frames answer (`session_reset`, `mode_ok`); `context`, `usage` and `compact`
 * answer `context`, `usage` and `compacted`; every other result is a `command_result` carrying
 * `command`. Outside the errors, the frame holds the result's fields (`outcome` and the rest).
 */
export function commandFrame(result: ChatCommandResult, known: readonly string[]): ServerFrame {
  if (result.outcome === 'not_paired') return { type: 'error', code: 'not_paired', message: 'Commands need a paired principal.' };
  if (result.outcome === 'unknown') return unknownCommand(result.command, known);
  if (result.command === 'new' && result.outcome === 'reset') return { type: 'session_reset' };
  if (result.command === 'mode' && result.outcome === 'set') return { type: 'mode_ok', mode: result.mode };
  const { command, outcome, ...data } = result;
  const fields: Record<string, unknown> = data;
  if (outcome === 'refused') {
    const reason = typeof fields.reason === 'string' ? fields.reason : `The ${command} command was refused.`;
    return { type: 'error', code: `${command}_refused`, message: reason };
  }
  const own = OWN_FRAME.get(command);
  return own ? { ...fields, type: own, outcome } : { ...fields, type: 'command_result', command, outcome };
}

/**
 * Runs one `command` frame for an authenticated client: the core runner as the client token's
 * principal (the same checks as `/commands` on Telegram and Slack), and the frame that answers it.
 * Rejects only when the runner does (storage errors).
 */
export async function runCommandFrame(
  commands: ChannelCommands,
  frame: Extract<ClientFrame, { type: 'command' }>,
  sender: { principalId: string; identity: string; conversation: ConversationRef },
): Promise<ServerFrame> {
  const name = commandName(frame.name);
  const known = commands.list.map((c) => c.command);
  if (!commands.has(name)) return unknownCommand(name, known);
  const result = await commands.run({
    name,
    args: frame.args ?? '',
    conversation: sender.conversation,
    identity: sender.identity,
    principalId: sender.principalId,
  });
  return commandFrame(result, known);
}
