/** Turns the input box's text into the frame to send. */
export function frameOf(text: string, clientId: string): Record<string, unknown> {
  const t = text.trim();
  const cmd = /^\/([A-Za-z0-9_-]{1,32})(?:\s+([\s\S]*))?$/.exec(t);
  if (!cmd) return { type: 'message', clientId, text };
  const name = (cmd[1] ?? '').toLowerCase();
  const args = cmd[2]?.trim();
  if (name === 'new') return { type: 'new_session' };
  return { type: 'command', name, ...(args ? { args: args.slice(0, 4000) } : {}) };
}
