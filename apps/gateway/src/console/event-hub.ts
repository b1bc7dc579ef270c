import type { ServerResponse } from 'node:http';
import type { AccessChange, Channel, Scope, Storage } from '@switchboard/core';
import type { FastifyBaseLogger } from 'fastify';
import { approvalView } from '../api/approvals.js';
import { pairingView } from '../api/boundary.js';
import type { ConsoleSession } from './console-sessions.js';
import type { FeedEvent, LiveFeed } from './live-feed.js';

/** Who is watching one stream: an operator's scopes, or a member (their own approvals only). */
export type Viewer =
  | { kind: 'operator'; tokenId: string; scopes: readonly Scope[]; sessionHash?: string }
  | { kind: 'member'; tokenId: string; principalId: string; sessionHash: string };

interface Stream {
  viewer: Viewer;
  res: ServerResponse;
}

/** An event ready to send: its name, its data, and who may see it. */
interface Outgoing {
  type: string;
  data: unknown;
  /** The operator scope that sees it (`admin` sees all); null: no operator scope does. */
  scope: Scope | null;
  /** The member who sees it (their own approval), if any. */
  principalId?: string | null;
}

// Bounds: open streams in all, and the unsent bytes one slow viewer may hold before it is cut.
const MAX_STREAMS = 500;
const MAX_STREAMS_PER_TOKEN = 20;
const MAX_BUFFERED_BYTES = 1 << 20;
const PENDING_CAP = 1000;

const may = (v: Viewer, e: Outgoing): boolean =>
  v.kind === 'operator'
    ? e.scope !== null && (v.scopes.includes(e.scope) || v.scopes.includes('admin'))
    : e.principalId !== undefined && e.principalId !== null && e.principalId === v.principalId;

const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The console's live stream (`GET /api/v1/events`): one server-sent-events stream per viewer, fed
 * from the {@link LiveFeed} and filtered here by the viewer's scopes — approvals need `approvals`,
 * pairing `pairing`, channel health, turn ends and stats `read`; a member sees only the approvals
 * of their own turns. Stats and health are computed once per tick for every stream, and only while
 * someone watches. A stream ends when its session or token does.
 */
export class EventHub {
  private readonly streams = new Set<Stream>();
  private unsubscribe: (() => void) | null = null;
  private statsTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private health = new Map<string, string>();

  constructor(
    private readonly deps: {
      feed: LiveFeed;
      storage: Storage;
      channels: readonly Channel[];
      log: FastifyBaseLogger;
      statsIntervalMs: number;
      pingIntervalMs: number;
    },
  ) {}

  /** Why another stream for `viewer` may not open now (every stream counts, and one token's), or null. */
  refusal(viewer: Viewer): string | null {
    if (this.streams.size >= MAX_STREAMS) return `Too many live streams are open (${MAX_STREAMS}); retry shortly.`;
    let own = 0;
    for (const s of this.streams) if (s.viewer.tokenId === viewer.tokenId) own++;
    return own >= MAX_STREAMS_PER_TOKEN ? `This token already has ${MAX_STREAMS_PER_TOKEN} live streams open; close one first.` : null;
  }

  /** Starts a stream on `res` (headers not sent yet): the current state first, then live events. */
  async open(viewer: Viewer, res: ServerResponse): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    const stream: Stream = { viewer, res };
    this.streams.add(stream);
    res.on('close', () => this.drop(stream));
    this.start();
    res.write(': connected\n\n');
    if (may(viewer, { type: '', data: null, scope: 'read' })) {
      for (const c of this.deps.channels) this.write(stream, frame('channel.health', healthOf(c)));
      this.write(stream, frame('stats', await this.stats()));
    }
  }

  /** Ends the streams an access change takes authority from. */
  readonly onAccessChange = (change: AccessChange): void => {
    for (const s of [...this.streams]) {
      const v = s.viewer;
      const hit =
        ((change.type === 'token_revoked' || change.type === 'token_expired') && v.tokenId === change.tokenId) ||
        ((change.type === 'principal_removed' || change.type === 'principal_demoted') && v.kind === 'member' && v.principalId === change.principalId);
      if (hit) this.end(s, change.type);
    }
  };

  /** Ends the streams of a console session that ended (logout, expiry, revocation). */
  readonly onSessionEnd = (session: ConsoleSession): void => {
    for (const s of [...this.streams]) if (s.viewer.sessionHash === session.hash) this.end(s, 'session_ended');
  };

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const s of [...this.streams]) this.end(s, 'shutting_down');
  }

  private start(): void {
    if (this.unsubscribe) return;
    this.health = new Map(this.deps.channels.map((c) => [c.id, healthKey(c)]));
    this.unsubscribe = this.deps.feed.on((e) => {
      void this.outgoing(e)
        .then((out) => out && this.dispatch(out))
        .catch((err: unknown) => this.deps.log.error({ err }, 'console live stream: an event could not be sent'));
    });
    this.statsTimer = setInterval(
      () => void this.tick().catch((err: unknown) => this.deps.log.error({ err }, 'console live stream: stats failed')),
      this.deps.statsIntervalMs,
    );
    this.pingTimer = setInterval(() => {
      for (const s of [...this.streams]) this.write(s, ': ping\n\n');
    }, this.deps.pingIntervalMs);
    this.statsTimer.unref();
    this.pingTimer.unref();
  }

  private drop(stream: Stream): void {
    this.streams.delete(stream);
    if (this.streams.size > 0 || !this.unsubscribe) return;
    this.unsubscribe();
    this.unsubscribe = null;
    clearInterval(this.statsTimer);
    clearInterval(this.pingTimer);
  }

  private end(stream: Stream, reason: string): void {
    this.write(stream, frame('end', { reason }));
    stream.res.end();
    this.drop(stream);
  }

  private write(stream: Stream, text: string): void {
    const { res } = stream;
    if (res.writableEnded || res.destroyed) {
      this.drop(stream);
      return;
    }
    // A viewer that does not read is cut rather than buffered without bound.
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      res.destroy();
      this.drop(stream);
      return;
    }
    res.write(text);
  }

  private dispatch(e: Outgoing): void {
    const text = frame(e.type, e.data);
    for (const s of [...this.streams]) if (may(s.viewer, e)) this.write(s, text);
  }

  /** The event a feed event becomes (the approval or pairing request as the API shows it), or null when it is gone. */
  private async outgoing(e: FeedEvent): Promise<Outgoing | null> {
    switch (e.type) {
      case 'approval': {
        const a = await this.deps.storage.approvals.get(e.activity.approvalId);
        if (!a) return null;
        const type = e.activity.type === 'requested' ? 'approval.requested' : 'approval.decided';
        return { type, data: { id: a.id, status: a.status, approval: approvalView(a) }, scope: 'approvals', principalId: a.requesterPrincipalId };
      }
      case 'pairing': {
        const p = await this.deps.storage.pairing.get(e.activity.code);
        if (!p) return null;
        const type = e.activity.type === 'requested' ? 'pairing.requested' : 'pairing.decided';
        return { type, data: { code: p.code, status: p.status, request: pairingView(p, false) }, scope: 'pairing' };
      }
      case 'turn.ended':
        return { type: 'turn.ended', data: { channel: `${e.channel}:${e.account}`, outcome: e.outcome, durationMs: e.durationMs }, scope: 'read' };
    }
  }

  private async stats() {
    const { storage } = this.deps;
    const approvals = await storage.approvals.list({ status: 'pending', limit: PENDING_CAP });
    const pairing = await storage.pairing.list({ status: 'pending' });
    return { ...this.deps.feed.stats(), pendingApprovals: approvals.length, pendingPairing: pairing.length, at: new Date().toISOString() };
  }

  /** One tick: changed channel health, then the stats, to the viewers with `read`. */
  private async tick(): Promise<void> {
    for (const c of this.deps.channels) {
      const key = healthKey(c);
      if (this.health.get(c.id) === key) continue;
      this.health.set(c.id, key);
      this.dispatch({ type: 'channel.health', data: healthOf(c), scope: 'read' });
    }
    this.dispatch({ type: 'stats', data: await this.stats(), scope: 'read' });
  }
}

/** A channel account's health as the stream shows it: `{ channel, account, state, detail }` (the details `/readyz` has). */
function healthOf(c: Channel) {
  const h = c.health();
  return { channel: c.type, account: c.account, id: c.id, required: c.required, state: h.state, detail: h.detail ?? null };
}

const healthKey = (c: Channel) => {
  const h = c.health();
  return `${h.state}\u0000${h.detail ?? ''}`;
};
