import type { Channel, ConversationRef } from '@switchboard/core';
import type { FakeChannelEnv } from '../fake-channel-env.js';

/** An inbound item a rig injected through its platform fake. */
export interface InjectedItem {
  /** The dedupe key the channel is expected to give the item (the env's timeline is keyed by it). */
  dedupeKey: string;
  text: string;
  /** Platform-specific handle (an update, a signed request, a client id) for redelivery. */
  handle: unknown;
}

/** One message or frame as the platform shows it for the rig's conversation. */
export interface PlatformOutput {
  kind: 'message' | 'final' | 'notice' | 'error';
  text: string;
  /** The turn it belongs to, where the platform shows it (WebSocket frames, webhook callbacks). */
  turnId?: string;
  /** A final's end reason, where the platform shows it (`steered`, `completed`). */
  reason?: string;
  /** The platform's id for it (chat message id). */
  id?: string;
}

/**
 * One channel under contract: the channel, its platform fake and the fake gateway, built fresh
 * for each contract point. The rig drives the platform side only through the platform fake (the
 * real client libraries talk to it); it never calls the channel's internals.
 */
export interface ContractRig {
  readonly env: FakeChannelEnv;
  readonly channel: Channel;
  /** The conversation renders go to and the platform fake watches. */
  readonly conversation: ConversationRef;
  /** What the channel documents for a steered message: WebSocket sends one `final` with reason `steered`; chats send nothing. */
  readonly steered: 'final-frame' | 'nothing';
  /** Starts the channel against `env.contextFor(channel)` and connects the platform side; resolves once items can be injected. */
  start(): Promise<void>;
  /**
   * Sends a new inbound item as the platform does and redelivers it (as the platform would) until
   * it is acknowledged. Marks `ack` (and `nack` for a refusal) on `env` the moment the platform
   * fake sees it. Resolves once acknowledged.
   */
  inject(text: string): Promise<InjectedItem>;
  /** The same item again (a platform redelivery); resolves once acknowledged (marking `ack`). */
  redeliver(item: InjectedItem): Promise<void>;
  /** What the platform shows for the conversation now (deleted messages left out). */
  output(): Promise<PlatformOutput[]>;
  /** Puts a message on the platform as a previous process's draft; returns its platform id (channels with drafts). */
  seedDraft?(text: string): Promise<string>;
  /** The platform's view of one message (channels with drafts). */
  message?(id: string): Promise<{ text: string; deleted: boolean } | undefined>;
  /** Makes every platform call fail; resolves with the function that heals it. */
  breakPlatform(): Promise<() => Promise<void>>;
  /** Drops the platform's connection to the channel where there is one (WebSocket: the client's socket). */
  closeClient?(): Promise<void>;
  /** Tears down the platform fake, the env and anything else (the suite stops the channel itself). */
  close(): Promise<void>;
}

/** A channel package's entry to the contract suite. */
export interface ContractHarness {
  /** Shown in the suite's name: `websocket`, `telegram (polling)`. */
  name: string;
  /** Builds a fresh rig (not started). */
  setup(): Promise<ContractRig>;
  /** How long `stop()` may take before it counts as hung (default 5000 ms; a wait limit, not a measurement). */
  stopBudgetMs?: number;
  /**
   * Timers a client library is known to leave pending after stop, matched against the stack that
   * created them: a waiver for a library's bug, named and explained at the harness, not a way to
   * excuse the channel's own timers.
   */
  knownLibraryTimers?: RegExp;
}
