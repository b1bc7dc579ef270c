import { SwbError } from '@switchboard/agent';
import type { AcceptResult, ConversationRef, InboundMessage } from './channel.js';
import type { TurnEngine } from './engine.js';
import { SwbErrorCode } from './errors.js';
import { attachInboundFiles } from './inbound-files.js';
import { inboxTooLarge } from './inbox-limits.js';
import type { SessionKey } from './session-key.js';
import type { Storage } from './storage.js';
import type { WorkspaceDirectories } from './workspaces.js';

/** What the router is built from: resolved values and the two stages it routes between. */
export interface RouterOptions {
  /** The agent every conversation is routed to unless its message addresses another ({@link InboundMessage.agentId}). */
  defaultAgent: string;
  /** Every agent id a message may address; absent: the default agent only. */
  agents?: readonly string[];
  /** The largest stored form (JSON) of an inbound item, in bytes (`limits.inboxMaxBytes`). */
  inboxMaxBytes: number;
  /** The inbox, to answer a dead-lettered oversize item delivered again as a duplicate. */
  storage: Pick<Storage, 'turns'>;
  /** Queues an admitted message's turn. */
  engine: Pick<TurnEngine, 'accept'>;
  /** The boundary gate every new inbound item passes (`BoundaryService.accept`); it calls {@link Router.admit} for admitted ones. */
  gate(message: InboundMessage): Promise<AcceptResult>;
  /** False once the gateway is shutting down: new items are refused (the channel retries them later). */
  accepting(): boolean;
  /** Where files people send land (their workspace's `inbox/`); absent: files are described as not saved. */
  workspaces?: Pick<WorkspaceDirectories, 'ensure'>;
}

/**
 * Where a person's message goes. `accept` is the channels' entry: refused while shutting down,
 * refused when too large to store, otherwise through the gate; `admit` is the gate's exit: the
 * session is keyed from the inbound message (never from what the model says) and the turn queued.
 */
export class Router {
  constructor(private readonly options: RouterOptions) {}

  /** The session a conversation's messages belong to: a DM is the person's own, a room (or thread) is shared. */
  sessionKey(conversation: ConversationRef, principalId: string, addressed?: { agentId?: string; sessionLabel?: string }): SessionKey {
    const agent = addressed?.agentId ?? this.options.defaultAgent;
    if (conversation.kind === 'dm') {
      const label = addressed?.sessionLabel;
      return { agent, channel: conversation.channel, account: conversation.account, scope: 'dm', principalId, ...(label ? { label } : {}) };
    }
    return {
      agent,
      channel: conversation.channel,
      account: conversation.account,
      scope: 'room',
      conversation: conversation.id,
      ...(conversation.thread ? { thread: conversation.thread } : {}),
    };
  }

  /**
   * Accepts an inbound item from a channel. Throws `SWB_E_SHUTTING_DOWN` while shutting down and
   * `SWB_E_INBOX_TOO_LARGE` for an item over `inboxMaxBytes` — unless that item was dead-lettered
   * before, which answers as a duplicate whatever its size.
   */
  async accept(message: InboundMessage): Promise<AcceptResult> {
    if (!this.options.accepting()) throw new SwbError(SwbErrorCode.ShuttingDown, 'The gateway is shutting down; send the message again shortly.');
    const tooLarge = inboxTooLarge(message, this.options.inboxMaxBytes);
    if (tooLarge) {
      const seen = await this.options.storage.turns.seen(message.channel, message.account, message.dedupeKey);
      if (seen) return seen;
      throw tooLarge;
    }
    return this.options.gate(message);
  }

  /**
   * Queues the turn of a message the gate admitted. A room message needs no principal (the room's
   * session is shared); a DM without one throws `SWB_E_UNKNOWN_SENDER`.
   */
  admit(message: InboundMessage): Promise<AcceptResult> {
    const agentId = message.agentId ?? this.options.defaultAgent;
    if (agentId !== this.options.defaultAgent && !this.options.agents?.includes(agentId)) {
      throw new SwbError(SwbErrorCode.UnknownAgent, `No agent "${agentId.slice(0, 64)}" on this gateway.`);
    }
    const addressed = { agentId, ...(message.sessionLabel ? { sessionLabel: message.sessionLabel } : {}) };
    const key: SessionKey | null =
      message.kind === 'room'
        ? this.sessionKey(message.conversation, '', addressed)
        : message.principalId
          ? this.sessionKey(message.conversation, message.principalId, addressed)
          : null;
    if (!key) throw new SwbError(SwbErrorCode.UnknownSender, 'A direct message needs a known sender.');
    const route = { agentId, key, clientId: message.platformId };
    // Files the person sent land in their workspace before the turn is queued (see inbound-files.ts).
    if (!message.files?.length) return this.options.engine.accept(message, route);
    // A redelivered message (webhook retry, a poll offset not yet committed) is answered as the
    // duplicate it is before its files are downloaded again (a second copy would land as `name-1`).
    return this.options.storage.turns
      .seen(message.channel, message.account, message.dedupeKey)
      .then((seen) => seen ?? this.withFiles(message).then((saved) => this.options.engine.accept(saved, route)));
  }

  // The message with its files saved in the sender's workspace (see inbound-files.ts).
  private withFiles(message: InboundMessage): Promise<InboundMessage> {
    const workspaces = this.options.workspaces ?? {
      ensure: () => Promise.reject(new Error('this gateway keeps no workspaces')),
    };
    return attachInboundFiles(message, message.agentId ?? this.options.defaultAgent, workspaces);
  }
}
