import type { ChannelContext } from '@switchboard/core';
import type { FastifyPluginAsync } from 'fastify';
import type { FakeChannelEnv } from './fake-channel-env.js';

/**
 * The `ChannelContext` a {@link FakeChannelEnv} hands to a channel: THE ONLY FILE in testkit that
 * knows the context's shape. Every member forwards to the env (real SQLite store, real ledger
 * uniqueness, recorded calls), so when `ChannelContext` is regrouped only this mapping changes;
 * the contract suite and channel tests talk to the env's observation API.
 */
export function fakeChannelContext(env: FakeChannelEnv): ChannelContext {
  return {
    log: env.log,
    accept: (message) => env.acceptItem(message),
    inboxMaxAttempts: env.inboxMaxAttempts,
    deadLetter: (item) => env.recordDeadLetter(item),
    http: {
      register: async (plugin: FastifyPluginAsync) => {
        await env.app.register(plugin);
      },
    },
    verifyClientToken: async (secret) => env.checkClientToken(secret),
    clientAddress: (req) => req.socket.remoteAddress ?? 'unknown',
    onAccessChange: (listener) => env.subscribeAccess(listener),
    accepting: () => env.accepting(),
    clientTokenActive: async (tokenId) => env.tokenActive(tokenId),
    finalsSince: (conversation, cursor) => env.finalsAfter(conversation, cursor),
    recordDelivery: (part) => env.recordPart(part),
    deliveriesOf: (turnId) => env.ledger(turnId),
    updateSession: async (conversation, principalId, patch) => {
      env.request('updateSession', conversation, principalId, patch);
      const s = await env.session(conversation, principalId);
      const updated = await env.storage.sessions.updateSettings(s.id, patch);
      return { sessionId: updated.id, queueMode: updated.settings.queueMode ?? 'followup' };
    },
    resetSession: async (conversation, principalId) => {
      env.request('resetSession', conversation, principalId);
      await env.storage.sessions.reset(env.sessionKey(conversation, principalId));
    },
    principalFor: async (identity) => env.principalOf(identity),
    pendingApprovals: async (conversation, turnId) => env.pendingFor(conversation, turnId),
    decideApproval: async (approvalId, decision, always, by) => {
      env.request('decideApproval', approvalId, decision, always, by);
      const i = env.pending.findIndex((p) => p.approvalId === approvalId);
      if (i < 0) return { outcome: 'not_found' };
      const [p] = env.pending.splice(i, 1);
      return { outcome: 'decided', status: decision === 'allow' ? 'allowed' : 'denied', decidedBy: by.principalId, tool: p!.tool };
    },
    sessionStatus: async (conversation, principalId) => {
      env.request('sessionStatus', conversation, principalId);
      const s = await env.session(conversation, principalId);
      const entries = await env.storage.sessions.load(s.id);
      return {
        sessionId: s.id,
        model: 'fake-model',
        mode: s.settings.mode ?? 'default',
        queueMode: s.settings.queueMode ?? 'followup',
        entries: entries.length,
        pendingApprovals: env.pending.length,
        running: false,
      };
    },
    setMode: async (conversation, principalId, mode) => {
      env.request('setMode', conversation, principalId, mode);
      const s = await env.session(conversation, principalId);
      await env.storage.sessions.updateSettings(s.id, { mode });
      return { ok: true, mode };
    },
    stopRunning: async (conversation, principalId) => {
      env.request('stopRunning', conversation, principalId);
      return false;
    },
    abortTurn: async (turnId, conversation) => {
      env.request('abortTurn', turnId, conversation);
      return false;
    },
  };
}
