import { randomUUID } from 'node:crypto';
import type { ReleaseSlot, ReplicaBus, SubagentSlots } from '@switchboard/core';
import type { SharedSlotPool } from '@switchboard/store';
import { ExecRunQueue } from '@switchboard/tools';
import type { Logger } from 'pino';

// `subagents.perGateway` across replicas (issue 20): a subagent first gets a slot in this
// replica's queue (which also keeps `subagents.perTurn`, a turn running on one replica), then one
// of the gateway's slots in the database. A replica that frees a slot says so on the bus; a
// waiter also retries every third of the slot TTL, which is when a dead replica's slots lapse.

const FREED = 'slot_freed';

/** Options of {@link ReplicaSlots}. */
export interface ReplicaSlotsOptions {
  pool: SharedSlotPool;
  /** The pool's name on the bus. */
  poolName: string;
  bus: ReplicaBus;
  perGateway: number;
  perTurn: number;
  /** A held slot lapses this long after its last renewal (`replicas.leaseTtl`); renewed at a third of it. */
  ttlMs: number;
  log: Logger;
}

/** The subagent slots of one replica, counted against the gateway-wide limit in the database. */
export class ReplicaSlots implements SubagentSlots {
  private readonly local: ExecRunQueue;
  private readonly held = new Set<string>();
  private readonly wakers = new Set<() => void>();
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly o: ReplicaSlotsOptions) {
    this.local = new ExecRunQueue({ perGateway: o.perGateway, perSession: o.perTurn });
    this.unsubscribe = o.bus.on(FREED, (s) => {
      if (s.pool === o.poolName) this.wakeAll();
    });
  }

  async acquire(key: string, signal: AbortSignal, onWait?: () => void): Promise<ReleaseSlot> {
    let told = false;
    const waiting = () => {
      if (told) return;
      told = true;
      onWait?.();
    };
    const local = await this.local.acquire(key, signal, waiting);
    const id = randomUUID();
    try {
      while (!(await this.o.pool.tryTake(id))) {
        waiting();
        await this.freed(signal);
      }
    } catch (err) {
      local();
      throw err;
    }
    this.held.add(id);
    this.renewing();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      local();
      this.held.delete(id);
      if (this.held.size === 0 && this.renewTimer) {
        clearInterval(this.renewTimer);
        this.renewTimer = null;
      }
      void this.o.pool
        .release(id)
        .then(() => this.o.bus.publish({ topic: FREED, pool: this.o.poolName }))
        .catch((err: unknown) => this.o.log.warn({ err }, 'subagent slots: giving a slot back failed; it lapses at its expiry'));
    };
  }

  /** Stops renewing (shutdown): slots still held lapse at their expiry. */
  close(): void {
    this.unsubscribe();
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    this.wakeAll();
  }

  /** Resolves when a slot may have been freed (a bus signal, or a third of the TTL); rejects on abort. */
  private freed(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        reject(signal.reason);
      };
      const timer = setTimeout(done, Math.max(1, Math.floor(this.o.ttlMs / 3)));
      timer.unref();
      this.wakers.add(done);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wakeAll(): void {
    for (const w of [...this.wakers]) w();
  }

  private renewing(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(
      () => {
        const ids = [...this.held];
        void this.o.pool
          .renew(ids)
          .then((n) => {
            if (n < ids.length)
              this.o.log.warn({ held: ids.length, renewed: n }, 'subagent slots: a held slot had lapsed; the gateway-wide limit may be exceeded briefly');
          })
          .catch((err: unknown) => this.o.log.warn({ err }, 'subagent slots: renewing failed'));
      },
      Math.max(1, Math.floor(this.o.ttlMs / 3)),
    );
    this.renewTimer.unref();
  }
}
