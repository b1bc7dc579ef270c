import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import pino from 'pino';
import { afterEach, beforeEach } from 'vitest';
import { BoundaryService } from '../../src/boundary/service.js';
import { type BoundaryFieldsInput, type BoundarySettings, type PairingSettings, resolveBoundaryPolicy } from '../../src/boundary/settings.js';
import type { ConversationRef, InboundMessage } from '../../src/channel.js';
import type { Route } from '../../src/engine.js';
import { Router } from '../../src/router.js';

/** One notice a channel was asked to send. */
export interface SentNotice {
  channelId: string;
  conversation: ConversationRef;
  text: string;
}

/** The pairing limits the tests start from (the config defaults, with a short sweep). */
export const PAIRING: PairingSettings = { codeTtl: 3_600_000, maxPending: 20, maxHeld: 5, maxHeldBytes: 64 * 1024, cooldown: 600_000, sweepInterval: 60_000 };

/** Settings with one account per entry (`<type>:<account>` → its config fields). */
export function settingsOf(accounts: Record<string, BoundaryFieldsInput>): BoundarySettings {
  return { accounts: new Map(Object.entries(accounts).map(([id, fields]) => [id, resolveBoundaryPolicy(fields)])) };
}

export interface GateWorld {
  readonly storage: SqliteStorage;
  readonly gate: BoundaryService;
  readonly router: Router;
  /** Every notice sent, in order, through the fake channels. */
  readonly notices: SentNotice[];
  /** Every turn the router queued (the engine's accept), in order. */
  readonly queued: Array<{ message: InboundMessage; route: Route }>;
  /** Makes the fake channel's notify reject from now on. */
  breakNotify(): void;
}

/**
 * A boundary service and router over a fresh SQLite `:memory:` store, with fake channels that
 * record notices and an engine stand-in that stores each admitted message in the inbox (so
 * redeliveries are recognised as in the gateway) and records its route. No gateway process.
 */
export function useGate(accounts: Record<string, BoundaryFieldsInput>, pairing: Partial<PairingSettings> = {}): GateWorld {
  let world: GateWorld | undefined;
  beforeEach(() => {
    const storage = openSqliteStorage({ file: ':memory:' });
    const notices: SentNotice[] = [];
    const queued: GateWorld['queued'] = [];
    let broken = false;
    const settings = settingsOf(accounts);
    const fakeChannel = (channelId: string) => ({
      async notify(conversation: ConversationRef, text: string): Promise<void> {
        if (broken) throw new Error('platform down');
        notices.push({ channelId, conversation, text });
      },
    });
    const channels = new Map([...settings.accounts.keys()].map((id) => [id, fakeChannel(id)]));
    const engine = {
      async accept(message: InboundMessage, route: Route) {
        queued.push({ message, route });
        return storage.turns.accept(message, { key: route.key, clientId: route.clientId });
      },
    };
    const router: Router = new Router({
      defaultAgent: 'default',
      inboxMaxBytes: 1024 * 1024,
      storage,
      engine,
      gate: (message) => gate.accept(message),
      accepting: () => true,
    });
    const gate: BoundaryService = new BoundaryService({
      storage,
      log: pino({ level: 'silent' }),
      settings,
      pairing: { ...PAIRING, ...pairing },
      rateLimitWindow: 600_000,
      channel: (id) => channels.get(id),
      admit: (message) => router.admit(message),
    });
    world = {
      storage,
      gate,
      router,
      notices,
      queued,
      breakNotify: () => {
        broken = true;
      },
    };
  });
  afterEach(async () => {
    await world?.gate.stop();
    world?.storage.close();
  });
  return {
    get storage() {
      return world!.storage;
    },
    get gate() {
      return world!.gate;
    },
    get router() {
      return world!.router;
    },
    get notices() {
      return world!.notices;
    },
    get queued() {
      return world!.queued;
    },
    breakNotify: () => world!.breakNotify(),
  };
}

let seq = 0;

/** A DM from `sender` (`<type>:<sender>` identity) on channel account `channelId`. */
export function dm(channelId: string, sender: string, text: string, extra: Partial<InboundMessage> = {}): InboundMessage {
  const [channel, account] = channelId.split(':') as [string, string];
  seq++;
  return {
    dedupeKey: `k${seq}`,
    channel,
    account,
    conversation: { channel, account, id: `dm-${sender}`, kind: 'dm' },
    sender: { identity: `${channel}:${sender}`, displayName: sender, isBot: false },
    kind: 'dm',
    mentioned: true,
    text,
    platformId: `p${seq}`,
    receivedAt: new Date(),
    ...extra,
  };
}

/** A room message from `sender` in `room`, mentioning the assistant unless told otherwise. */
export function roomMessage(
  channelId: string,
  room: string,
  sender: string,
  text: string,
  opts: { mentioned?: boolean; thread?: string } = {},
): InboundMessage {
  const [channel, account] = channelId.split(':') as [string, string];
  seq++;
  return {
    dedupeKey: `k${seq}`,
    channel,
    account,
    conversation: { channel, account, id: room, kind: 'room', ...(opts.thread ? { thread: opts.thread } : {}) },
    sender: { identity: `${channel}:${sender}`, displayName: sender, isBot: false },
    kind: 'room',
    mentioned: opts.mentioned ?? true,
    text,
    platformId: `p${seq}`,
    receivedAt: new Date(),
  };
}

/** The pairing code in a notice text, or null. */
export function codeIn(text: string): string | null {
  return /pairing code (?:is )?([A-Z0-9]{8})\b/.exec(text)?.[1] ?? null;
}
