import type { ChannelLedger, ConversationRef, DeliveryContent, DeliveryRecord, LedgerWrite, NewDelivery, TurnLedger } from './channel.js';
import type { Storage } from './storage.js';
import type { TurnFinishes } from './turn-finishes.js';

/** The store a {@link DeliveryLedger} reads and writes: the `deliveries` repository, or an in-memory one in tests. */
export type DeliveryStore = Pick<Storage['deliveries'], 'record' | 'ofTurn' | 'finalsSince'>;

/** The channel account a ledger belongs to: every row it writes and every replay it reads is this account's. */
export interface LedgerOwner {
  /** The channel type, e.g. `telegram`. */
  channel: string;
  account: string;
}

/**
 * One channel account's delivery ledger ({@link ChannelLedger}): the single place where channels
 * read and write delivery rows. A render calls {@link DeliveryLedger.begin} to learn what earlier
 * renders of the turn delivered (finals to skip, the draft to edit or delete), then records each
 * part through the returned {@link TurnLedger}. Every write goes through {@link DeliveryLedger.record},
 * so how a row is stored (e.g. with the turn's finish transaction) changes in one place.
 */
export class DeliveryLedger implements ChannelLedger {
  /**
   * @param finishes the turns whose end waits for their last final part (the engine's); without
   *   it every part is recorded on its own.
   */
  constructor(
    private readonly store: DeliveryStore,
    private readonly owner: LedgerOwner,
    private readonly finishes?: Pick<TurnFinishes, 'take'>,
  ) {}

  async begin(turnId: string, to: ConversationRef, opts: { onReadError?(err: unknown): void } = {}): Promise<TurnLedger> {
    let rows: DeliveryRecord[];
    try {
      rows = await this.store.ofTurn(turnId);
    } catch (err) {
      if (!opts.onReadError) throw err;
      opts.onReadError(err);
      rows = [];
    }
    return new TurnDeliveries(this, turnId, to, rows);
  }

  finalsSince(conversationId: string, cursor: number): Promise<DeliveryRecord[]> {
    return this.store.finalsSince(this.owner.channel, this.owner.account, conversationId, cursor);
  }

  /** Builds the row of one delivered part of a turn in `to` (owner's channel and account). */
  row(turnId: string, to: ConversationRef, part: number, kind: 'draft' | 'final', platformMessageId: string | null, content: DeliveryContent): NewDelivery {
    return { turnId, part, kind, channel: this.owner.channel, account: this.owner.account, conversationId: to.id, platformMessageId, content };
  }

  /** Stores one row; idempotent on (turn, part, kind): the first record wins. The only write path. */
  record(delivery: NewDelivery, opts: { last?: boolean } = {}): Promise<LedgerWrite> {
    // The last final part of a turn being finished is stored with the turn's end, in one transaction.
    const finish = opts.last && delivery.kind === 'final' ? this.finishes?.take(delivery.turnId) : null;
    return finish ? finish(delivery) : this.store.record(delivery);
  }
}

/** One turn's slice of the ledger: the rows read at begin, plus what this render records. */
class TurnDeliveries implements TurnLedger {
  readonly finals = new Map<number, DeliveryRecord>();
  readonly drafts = new Map<number, DeliveryRecord>();

  constructor(
    private readonly ledger: DeliveryLedger,
    readonly turnId: string,
    readonly to: ConversationRef,
    rows: readonly DeliveryRecord[],
  ) {
    for (const r of rows) this.remember(r);
  }

  recordDraft(part: number, platformMessageId: string | null, content: DeliveryContent): Promise<LedgerWrite> {
    return this.write(this.ledger.row(this.turnId, this.to, part, 'draft', platformMessageId, content));
  }

  recordFinal(part: number, platformMessageId: string | null, content: DeliveryContent, opts: { last?: boolean } = {}): Promise<LedgerWrite> {
    return this.write(this.ledger.row(this.turnId, this.to, part, 'final', platformMessageId, content), opts);
  }

  private async write(delivery: NewDelivery, opts: { last?: boolean } = {}): Promise<LedgerWrite> {
    const written = await this.ledger.record(delivery, opts);
    this.remember(written.record);
    return written;
  }

  private remember(r: DeliveryRecord): void {
    const byPart = r.kind === 'final' ? this.finals : this.drafts;
    if (!byPart.has(r.part)) byPart.set(r.part, r);
  }
}
