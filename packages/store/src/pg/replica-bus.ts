import type { ReplicaBus, ReplicaSignal } from '@switchboard/core';
import type { Sql } from './db.js';
import { type BusEvent, type PgBus, publish } from './notify.js';

/** Where a failed publish is reported (never thrown). */
export interface BusLog {
  warn(obj: object, msg: string): void;
}

/**
 * The {@link ReplicaBus} on PostgreSQL: signals are NOTIFY payloads on the {@link PgBus} channel,
 * published through the pool one after another (so the other replicas see them in publish order),
 * and events this replica published itself are dropped on arrival.
 */
export class PgReplicaBus implements ReplicaBus {
  private readonly handlers = new Map<string, Set<(s: ReplicaSignal) => void>>();
  private readonly resyncs = new Set<() => void>();
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly opts: { db: Sql; bus: PgBus; replicaId: string; log: BusLog }) {
    opts.bus.on('event', (e: BusEvent) => this.deliver(e));
    opts.bus.on('resync', () => {
      for (const h of [...this.resyncs]) this.call(() => h(), 'resync');
    });
  }

  get replicaId(): string {
    return this.opts.replicaId;
  }

  publish(signal: ReplicaSignal): void {
    const event: BusEvent = { ...signal, topic: signal.topic, from: this.opts.replicaId };
    this.tail = this.tail
      .then(() => publish(this.opts.db, this.opts.bus.channel, event))
      .catch((err: unknown) => this.opts.log.warn({ err, topic: signal.topic }, 'replica bus: publish failed'));
  }

  /** Resolves once everything published so far was handed to the database (shutdown, tests). */
  flushed(): Promise<void> {
    return this.tail;
  }

  on(topic: string, handler: (signal: ReplicaSignal) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  onResync(handler: () => void): () => void {
    this.resyncs.add(handler);
    return () => this.resyncs.delete(handler);
  }

  private deliver(e: BusEvent): void {
    if (e.from === this.opts.replicaId) return;
    const set = this.handlers.get(e.topic);
    if (!set) return;
    const { from: _from, ...signal } = e;
    for (const h of [...set]) this.call(() => h(signal as ReplicaSignal), e.topic);
  }

  private call(fn: () => void, topic: string): void {
    try {
      fn();
    } catch (err) {
      this.opts.log.warn({ err, topic }, 'replica bus: a handler failed');
    }
  }
}
