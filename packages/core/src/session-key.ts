/** The parts a session is keyed by (see docs/adr/0001-session-keys.md). */
export type SessionKey =
  | {
      agent: string;
      channel: string;
      account: string;
      scope: 'dm';
      principalId: string;
      /** A session the person's client named (OpenAI channel `X-Switchboard-Session`, scoped by the channel); absent: their default session. */
      label?: string;
    }
  | { agent: string; channel: string; account: string; scope: 'room'; conversation: string; thread?: string };

const enc = (s: string) => encodeURIComponent(s);

/** One canonical string per key: components percent-encoded and joined with ':'. */
export function sessionKeyString(key: SessionKey): string {
  const head = `${enc(key.agent)}:${enc(key.channel)}:${enc(key.account)}`;
  if (key.scope === 'dm') return `${head}:dm:${enc(key.principalId)}${key.label ? `:label:${enc(key.label)}` : ''}`;
  return `${head}:room:${enc(key.conversation)}${key.thread ? `:thread:${enc(key.thread)}` : ''}`;
}

/** Inverse of sessionKeyString; throws on a malformed key. */
export function parseSessionKey(s: string): SessionKey {
  const parts = s.split(':').map(decodeURIComponent);
  const [agent, channel, account, scope, a, t, thread] = parts;
  if (!agent || !channel || !account) throw new Error(`malformed session key: ${s}`);
  if (scope === 'dm' && a && parts.length === 5) return { agent, channel, account, scope, principalId: a };
  if (scope === 'dm' && a && t === 'label' && thread && parts.length === 7) return { agent, channel, account, scope, principalId: a, label: thread };
  if (scope === 'room' && a && parts.length === 5) return { agent, channel, account, scope, conversation: a };
  if (scope === 'room' && a && t === 'thread' && thread && parts.length === 7) {
    return { agent, channel, account, scope, conversation: a, thread };
  }
  throw new Error(`malformed session key: ${s}`);
}
