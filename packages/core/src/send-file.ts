import type { OutboundFile } from '@switchboard/agent';
import type { Channel, InboundMessage } from './channel.js';

/**
 * The `ToolContext.sendFile` of one turn: delivers to the conversation the turn answers, through
 * its channel, for the person whose message it answers. Empty when the channel cannot send files
 * (the `send_file` tool then says so).
 */
export function sendFileFor(channel: Channel | undefined, message: InboundMessage, turnId: string): { sendFile?: (file: OutboundFile) => Promise<string> } {
  if (!channel?.sendFile) return {};
  const send = channel.sendFile.bind(channel);
  return { sendFile: (file) => send(message.conversation, file, { turnId, principalId: message.principalId ?? null }) };
}
