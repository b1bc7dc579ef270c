import type { LedgerWrite, NewDelivery } from './channel.js';

/** Records a turn's last final part together with the turn's end, in one transaction. */
export type FinishWithDelivery = (delivery: NewDelivery) => Promise<LedgerWrite>;

/**
 * The turns whose end is waiting for their channel to deliver the last final part, so that the
 * part's ledger row and the turn's end are stored in one transaction (a text turn is then two
 * write transactions in all: its accept, and this).
 *
 * Contract: the engine {@link TurnFinishes.expect}s a turn's finish before it renders the turn's
 * end and {@link TurnFinishes.close}s it once the render settled. In between, the channel's
 * `DeliveryLedger` {@link TurnFinishes.take}s it — at most once — when it records the final part
 * the channel marks `last`. A turn no channel took it for (no channel, nothing delivered, a part
 * that failed to send, a render that threw) is finished by the engine on its own, so nothing
 * depends on a channel marking its last part; it only saves the separate write. The crash window
 * is the one there always was between a platform send and its ledger row.
 */
export class TurnFinishes {
  private readonly waiting = new Map<string, FinishWithDelivery>();

  /** Opens a turn's finish: until {@link close}, its last final part is recorded by `finish`. */
  expect(turnId: string, finish: FinishWithDelivery): void {
    this.waiting.set(turnId, finish);
  }

  /** The finish of a turn waiting for its last final part, handed out once (null: record the part on its own). */
  take(turnId: string): FinishWithDelivery | null {
    const finish = this.waiting.get(turnId);
    if (!finish) return null;
    this.waiting.delete(turnId);
    return finish;
  }

  /** Ends the wait (taken or not). */
  close(turnId: string): void {
    this.waiting.delete(turnId);
  }
}
