import type { InboundMessage, NewUsageRecord, SessionKey, Storage } from '@switchboard/core';

/** Hands each contract test the storage its beforeEach opened. */
export type StorageRef = () => Storage;

/** A DM session key for a principal. */
export const dmKey = (principalId: string, agent = 'main'): SessionKey => ({
  agent,
  channel: 'websocket',
  account: 'default',
  scope: 'dm',
  principalId,
});

/** A room session key, optionally threaded. */
export const roomKey = (conversation: string, thread?: string): SessionKey => ({
  agent: 'main',
  channel: 'slack',
  account: 'team1',
  scope: 'room',
  conversation,
  ...(thread === undefined ? {} : { thread }),
});

/** An inbound message; `over` replaces any field. */
export function inbound(dedupeKey: string, over: Partial<InboundMessage> = {}): InboundMessage {
  return {
    dedupeKey,
    channel: 'websocket',
    account: 'default',
    conversation: { channel: 'websocket', account: 'default', id: 'conv-1', kind: 'dm' },
    sender: { identity: 'ws:tok-1', displayName: 'Ada', isBot: false },
    kind: 'dm',
    mentioned: false,
    text: `hello ${dedupeKey}`,
    platformId: `pid-${dedupeKey}`,
    receivedAt: new Date('2025-03-01T12:00:00.123Z'),
    ...over,
  };
}

/** Waits long enough for the millisecond clock to move on. */
export const tick = (ms = 3): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Accepts a fresh message and returns its (non-null) turn and session ids. */
export async function queueTurn(s: Storage, dedupeKey: string, key: SessionKey = dmKey('p1')) {
  const r = await s.turns.accept(inbound(dedupeKey), { key, clientId: `client-${dedupeKey}` });
  if (r.duplicate || r.turnId === null || r.sessionId === null) throw new Error('expected a new turn');
  return { turnId: r.turnId, sessionId: r.sessionId, inboxId: r.inboxId };
}

/** One model call's usage row (turn t1 of session s1, principal p1), with `over` on top. */
export const usageCall = (over: Partial<NewUsageRecord> = {}): NewUsageRecord => ({
  turnId: 't1',
  sessionId: 's1',
  principalId: 'p1',
  agentId: 'main',
  channel: 'websocket:default',
  model: 'claude-sonnet-4-5',
  inputTokens: 10,
  outputTokens: 5,
  cacheReadInputTokens: 100,
  cacheCreationInputTokens: 20,
  costUsd: 0.001,
  ...over,
});
