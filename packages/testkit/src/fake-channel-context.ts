import { defaultModelSpec, TokenEstimator } from '@switchboard/agent';
import {
  type Channel,
  type ChannelContext,
  type ChannelPeople,
  ChatCommands,
  contextReport,
  DeliveryLedger,
  type DeliveryStore,
  periodWindow,
} from '@switchboard/core';
import type { FastifyPluginAsync } from 'fastify';
import type { FakeChannelEnv } from './fake-channel-env.js';

/** The channel account a fake context is bound to (as the gateway binds one context per channel). */
export type FakeContextOwner = Pick<Channel, 'type' | 'account'> & { authenticatesClients?: boolean };

/**
 * The `ChannelContext` a {@link FakeChannelEnv} hands to one channel account: THE ONLY FILE in
 * testkit that knows the context's shape. Every group forwards to the env (real SQLite store, the
 * core `DeliveryLedger` and `ChatCommands` over it, recorded calls), so when `ChannelContext`
 * changes only this mapping changes; the contract suite and channel tests talk to the env's
 * observation API. Like the gateway, `clientAuth` is given only to a channel that authenticates
 * its own clients.
 */
export function fakeChannelContext(env: FakeChannelEnv, owner: FakeContextOwner): ChannelContext {
  const deliveries: DeliveryStore = {
    record: (part) => env.recordPart(part),
    ofTurn: (turnId) => env.ledger(turnId),
    finalsSince: (channel, account, id, cursor) => env.finalsAfter({ channel, account, id, kind: 'dm' }, cursor),
  };
  const people = fakePeople(env);
  return {
    inbox: {
      accept: (message) => env.acceptItem(message),
      maxAttempts: env.inboxMaxAttempts,
      deadLetter: (item) => env.recordDeadLetter(item),
      accepting: () => env.accepting(),
      cursors: {
        get: (name) => env.storage.cursors.get(`${owner.type}:${owner.account}:${name}`),
        set: (name, value) => env.storage.cursors.set(`${owner.type}:${owner.account}:${name}`, value),
      },
    },
    ledger: new DeliveryLedger(deliveries, { channel: owner.type, account: owner.account }),
    people,
    approvals: {
      pending: async (conversation, turnId) => env.pendingFor(conversation, turnId),
      decide: async (approvalId, decision, always, by) => {
        env.request('decideApproval', approvalId, decision, always, by);
        const i = env.pending.findIndex((p) => p.approvalId === approvalId);
        if (i < 0) return { outcome: 'not_found' };
        const [p] = env.pending.splice(i, 1);
        return { outcome: 'decided', status: decision === 'allow' ? 'allowed' : 'denied', decidedBy: by.principalId, tool: p!.tool };
      },
    },
    commands: new ChatCommands(people),
    ...(owner.authenticatesClients
      ? {
          clientAuth: {
            verify: async (secret: string) => env.checkClientToken(secret),
            addressOf: (req) => req.socket.remoteAddress ?? 'unknown',
            tokenActive: async (tokenId: string) => env.tokenActive(tokenId),
            onAccessChange: (listener) => env.subscribeAccess(listener),
          } satisfies NonNullable<ChannelContext['clientAuth']>,
        }
      : {}),
    http: {
      register: async (plugin: FastifyPluginAsync) => {
        await env.app.register(plugin);
      },
    },
    log: env.log,
  };
}

function fakePeople(env: FakeChannelEnv): ChannelPeople {
  return {
    principalFor: async (identity) => env.principalOf(identity),
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
    contextReport: async (conversation, principalId) => {
      env.request('contextReport', conversation, principalId);
      const s = await env.session(conversation, principalId);
      const entries = await env.storage.sessions.load(s.id);
      return contextReport({ entries, system: [], tools: [], spec: defaultModelSpec('fake-model'), estimator: new TokenEstimator() });
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
    usage: async (conversation, principalId) => {
      env.request('usage', conversation, principalId);
      // The person's spend from the env's own usage rows, in UTC, with no budget.
      const now = new Date();
      const day = periodWindow('day', now, 'UTC');
      const month = periodWindow('month', now, 'UTC');
      const spend = await env.storage.usage.spend({ principalId }, { day: day.start, month: month.start });
      return {
        timezone: 'UTC',
        periods: [
          { period: 'day', ...spend.day, resetsAt: day.end.toISOString() },
          { period: 'month', ...spend.month, resetsAt: month.end.toISOString() },
        ],
      };
    },
    abortTurn: async (turnId, conversation) => {
      env.request('abortTurn', turnId, conversation);
      return false;
    },
  };
}
