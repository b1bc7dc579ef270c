import type { ChannelFanout } from '@switchboard/core';
import type { PgDb } from './db.js';
import { NOW_MS } from './leases.js';
import { type BusEvent, type PgBus, publish } from './notify.js';
import type { BusLog } from './replica-bus.js';

// Channel frames between replicas (issue 20). The frames are rows of `fanout_frames`; the NOTIFY
// payload names the range of ids one flush wrote and who wrote it, never the frames. Frames sent
// while a flush is in flight wait and go out together in the next one, so a busy replica writes
// one row set per round trip rather than one per delta.

const TOPIC = 'fanout';
/** Ids remembered as delivered, so a live announcement and a resync read never deliver a row twice. */
const DELIVERED_MEMORY = 10_000;
/** Rows read per query on a resync. */
const RESYNC_PAGE = 500;

/** Options of {@link PgFanoutHub}. */
export interface FanoutHubOptions {
  db: PgDb;
  bus: PgBus;
  replicaId: string;
  /** Staged frames older than this (milliseconds) are deleted, and not replayed after a gap. */
  retentionMs: number;
  log: BusLog;
}

interface Staged {
  channel: string;
  audience: string;
  frames: readonly unknown[];
}

interface FrameRow {
  id: number;
  origin: string;
  channel: string;
  audience: string;
  frames: string;
}

/**
 * One per process: stages the frames of every channel of this replica and hands the frames other
 * replicas staged to this replica's channels ({@link forChannel}).
 */
export class PgFanoutHub {
  private readonly handlers = new Map<string, Set<(audience: string, frames: readonly unknown[]) => void>>();
  private pending: Staged[] = [];
  private flushing: Promise<void> | null = null;
  /** Reads of announced rows, one after another (so frames arrive in order). */
  private reads: Promise<void> = Promise.resolve();
  /** The highest id read so far: a resync reads what came after it. */
  private cursor = 0;
  private readonly delivered = new Set<number>();
  private lastPrune = 0;
  private started = false;

  constructor(private readonly opts: FanoutHubOptions) {}

  /** Reads where the stream stands and starts listening. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const row = await this.opts.db.row<{ max: number | null }>('SELECT max(id) AS max FROM fanout_frames');
    this.cursor = row?.max ?? 0;
    this.opts.bus.on('event', (e: BusEvent) => {
      if (e.topic !== TOPIC || e.from === this.opts.replicaId) return;
      const first = Number(e.first);
      const last = Number(e.last);
      if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || last < first) return;
      this.read(() => this.readAnnounced(e.from, first, last));
    });
    this.opts.bus.on('resync', () => this.read(() => this.readSince()));
  }

  /** The {@link ChannelFanout} of one channel id (the same id on every replica). */
  forChannel(channel: string): ChannelFanout {
    return {
      send: (audience, frames) => {
        if (frames.length === 0) return;
        this.pending.push({ channel, audience, frames });
        this.kick();
      },
      onFrames: (handler) => {
        let set = this.handlers.get(channel);
        if (!set) this.handlers.set(channel, (set = new Set()));
        set.add(handler);
        return () => set.delete(handler);
      },
    };
  }

  /** Resolves once every frame sent so far was written (shutdown, tests). */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        await this.write(batch).catch((err: unknown) => this.opts.log.warn({ err, frames: batch.length }, 'fanout: staging frames failed; they were dropped'));
      }
    })().finally(() => {
      this.flushing = null;
      // Sent between the loop's last check and here: flush those too.
      if (this.pending.length > 0) this.kick();
    });
  }

  private async write(batch: Staged[]): Promise<void> {
    const prune = Date.now() - this.lastPrune > this.opts.retentionMs / 2;
    await this.opts.db.tx(async (q) => {
      const ids = await q.rows<{ id: number }>(
        `INSERT INTO fanout_frames (origin, channel, audience, frames, created_at)
         SELECT $1, c, a, f, ${NOW_MS} FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(c, a, f, n) ORDER BY n
         RETURNING id`,
        [this.opts.replicaId, batch.map((b) => b.channel), batch.map((b) => b.audience), batch.map((b) => JSON.stringify(b.frames))],
      );
      const sorted = ids.map((r) => r.id).sort((a, b) => a - b);
      await publish(q, this.opts.bus.channel, { topic: TOPIC, from: this.opts.replicaId, first: sorted[0]!, last: sorted.at(-1)! });
      if (prune) await q.run(`DELETE FROM fanout_frames WHERE created_at < ${NOW_MS} - $1`, [Math.floor(this.opts.retentionMs)]);
    });
    if (prune) this.lastPrune = Date.now();
  }

  private read(fn: () => Promise<void>): void {
    this.reads = this.reads.then(fn).catch((err: unknown) => this.opts.log.warn({ err }, 'fanout: reading staged frames failed'));
  }

  private async readAnnounced(origin: string, first: number, last: number): Promise<void> {
    const rows = await this.opts.db.rows<FrameRow>(
      'SELECT id, origin, channel, audience, frames FROM fanout_frames WHERE id BETWEEN $1 AND $2 AND origin = $3 ORDER BY id',
      [first, last, origin],
    );
    for (const r of rows) this.deliver(r);
  }

  /** After a gap: every row staged by another replica since the last one read (within the retention). */
  private async readSince(): Promise<void> {
    for (;;) {
      const rows = await this.opts.db.rows<FrameRow>(
        'SELECT id, origin, channel, audience, frames FROM fanout_frames WHERE id > $1 AND origin <> $2 ORDER BY id LIMIT $3',
        [this.cursor, this.opts.replicaId, RESYNC_PAGE],
      );
      for (const r of rows) this.deliver(r);
      if (rows.length < RESYNC_PAGE) return;
    }
  }

  private deliver(r: FrameRow): void {
    if (r.id > this.cursor) this.cursor = r.id;
    if (this.delivered.has(r.id)) return;
    this.delivered.add(r.id);
    if (this.delivered.size > DELIVERED_MEMORY) this.delivered.delete(this.delivered.values().next().value!);
    const set = this.handlers.get(r.channel);
    if (!set || set.size === 0) return;
    let frames: unknown;
    try {
      frames = JSON.parse(r.frames);
    } catch {
      return;
    }
    if (!Array.isArray(frames)) return;
    for (const h of [...set]) {
      try {
        h(r.audience, frames);
      } catch (err) {
        this.opts.log.warn({ err, channel: r.channel }, 'fanout: a channel handler failed');
      }
    }
  }
}
