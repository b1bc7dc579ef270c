// Replicas (issue 20): several gateways on one database tell each other what changed. The port
// lives here, the PostgreSQL implementation (LISTEN/NOTIFY) in packages/store, the wiring in
// apps/gateway. A SQLite gateway has no bus: nothing here runs on its hot path.

/** A flat field of a {@link ReplicaSignal}: ids and small scalars, never content. */
export type SignalField = string | number | boolean | null;

/**
 * What one replica tells the others: a topic and flat id fields (e.g. `{ topic: 'approval_settled',
 * approvalId }`). Content is read from the database by id: a signal is small (the transport caps
 * it at a few kilobytes) and may be lost while a replica is disconnected (see {@link ReplicaBus.onResync}).
 */
export interface ReplicaSignal {
  topic: string;
  [field: string]: SignalField;
}

/**
 * The signals between replicas.
 *
 * - Guarantees: a published signal reaches every other replica listening when the publish
 *   completes, in publish order per publisher; never the publisher itself.
 * - Gaps: a replica whose listening connection dropped may have missed signals; once it is back it
 *   calls the `onResync` handlers, which re-read what they care about from the database.
 * - Must not: carry secrets or message content in a signal.
 */
export interface ReplicaBus {
  /** This replica's id (the `from` of what it publishes). */
  readonly replicaId: string;
  /** Tells the other replicas. Never throws; a failure is logged (the resync path covers the gap). */
  publish(signal: ReplicaSignal): void;
  /** Subscribes to one topic's signals from the other replicas; returns the unsubscribe. Handlers must not throw. */
  on(topic: string, handler: (signal: ReplicaSignal) => void): () => void;
  /** Subscribes to resyncs (signals may have been missed); returns the unsubscribe. Handlers must not throw. */
  onResync(handler: () => void): () => void;
}

/**
 * A channel's frames for viewers connected to other replicas (the WebSocket channel: a turn that
 * runs here streams to a person's sockets on every replica). Frames are staged in the database and
 * announced by id; each replica's instance of the same channel id receives them in order.
 *
 * - Guarantees: frames sent by one replica arrive at the others in send order, once each; never
 *   back here. After a gap (the listening connection dropped) the frames staged meanwhile are
 *   read from the database and delivered, as long as they are younger than the retention.
 * - Must not: send secrets (frames are stored for the retention).
 */
export interface ChannelFanout {
  /** Hands JSON frames for `audience` (e.g. a principal id) to the other replicas. Never throws. */
  send(audience: string, frames: readonly unknown[]): void;
  /** Subscribes to frames the other replicas sent to this channel; returns the unsubscribe. Handlers must not throw. */
  onFrames(handler: (audience: string, frames: readonly unknown[]) => void): () => void;
}

/** What {@link SharedMarks.put} answers: this call set the mark, or the live mark's value. */
export type MarkPut = { created: true } | { created: false; value: string };

/**
 * Short-lived marks every replica sees (the webhook channel's replay memory, the OpenAI channel's
 * dedupe window): a key with a value, dead once its expiry passed. Each method is one atomic step
 * in the database, so two replicas racing on one key get one `created`.
 */
export interface SharedMarks {
  /** Sets `key` to `value` until `expiresAt` (epoch ms) unless a live mark holds it: then its value. */
  put(key: string, value: string, expiresAt: number): Promise<MarkPut>;
  /** Replaces the value of a live mark (e.g. a request's answer once known); nothing when it is gone. */
  update(key: string, value: string): Promise<void>;
  /** Deletes the mark if it still holds `value` (a failed first attempt: an honest retry runs again). */
  forget(key: string, value: string): Promise<void>;
}
