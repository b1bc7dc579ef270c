import type { Channel, ChannelContext, ConversationRef, RenderMeta, TurnEvent } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONTRACT_POINTS,
  type ContractHarness,
  type ContractPoint,
  type ContractRig,
  checkContractPoint,
  FakeChannelEnv,
  runChannelContract,
} from '../src/index.js';

/**
 * The contract suite's own test: a small in-process chat platform and a channel for it that
 * keeps the contract, then one deliberately broken copy per contract point. The correct channel
 * passes every point; each broken one fails exactly its point.
 */

type Flaw =
  | 'acks before accept'
  | 'double turn on redelivery'
  | 'ledgers the final twice'
  | 're-sends a recorded final on resume'
  | 'leaves a recorded draft on resume'
  | 'answers a steered message'
  | 'render throws'
  | 'notify throws'
  | 'stop hangs on the second call'
  | 'stop throws on the second call'
  | 'stop leaves a timer running';

interface ToyMessage {
  id: string;
  text: string;
  deleted: boolean;
}

/** A chat platform: messages by id, a failing switch, deliveries acked when the channel's handler resolves. */
class ToyPlatform {
  readonly messages: ToyMessage[] = [];
  failing = false;
  private seq = 0;

  post(text: string): string {
    if (this.failing) throw new Error('toy platform: unavailable');
    const id = `m${++this.seq}`;
    this.messages.push({ id, text, deleted: false });
    return id;
  }

  edit(id: string, text: string): void {
    if (this.failing) throw new Error('toy platform: unavailable');
    const m = this.messages.find((x) => x.id === id);
    if (m) m.text = text;
  }
}

const CONV: ConversationRef = { channel: 'toy', account: 'main', id: 'room-1', kind: 'dm' };

class ToyChannel implements Channel {
  readonly id = 'toy:main';
  readonly type = 'toy';
  readonly account = 'main';
  readonly required = false;
  readonly capabilities = { threads: false, edits: true, buttons: false, maxText: 10_000 };
  private ctx: ChannelContext | null = null;
  private stops = 0;
  /** Items this channel has acknowledged (the flawed copy re-keys their redeliveries). */
  private readonly acked = new Set<string>();

  constructor(
    private readonly platform: ToyPlatform,
    private readonly flaw: Flaw | null,
  ) {}

  /** A keep-alive the channel runs while started. */
  heartbeat: NodeJS.Timeout | null = null;

  async start(ctx: ChannelContext): Promise<void> {
    this.ctx = ctx;
    this.heartbeat = setInterval(() => undefined, 60_000);
  }

  /** An inbound item; the platform acks when this resolves (and redelivers when it rejects). */
  async receive(key: string, text: string, ack: () => void): Promise<void> {
    const dedupeKey = this.flaw === 'double turn on redelivery' && this.acked.has(key) ? `${key}:again` : key;
    const accepting = this.ctx!.inbox.accept({
      dedupeKey,
      channel: 'toy',
      account: 'main',
      conversation: CONV,
      sender: { identity: 'toy:ada', isBot: false },
      kind: 'dm',
      mentioned: true,
      text,
      platformId: key,
      receivedAt: new Date(),
    });
    if (this.flaw === 'acks before accept') {
      ack();
      await accepting.catch(() => undefined);
      return;
    }
    await accepting;
    this.acked.add(key);
    ack();
  }

  async render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, _meta: RenderMeta): Promise<void> {
    try {
      await this.renderTurn(to, turnId, turn);
    } catch (err) {
      if (this.flaw === 'render throws') throw err;
    }
  }

  private async renderTurn(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>): Promise<void> {
    const ctx = this.ctx!;
    const ledger = await ctx.ledger.begin(turnId, to);
    let draft = ledger.drafts.get(0)?.platformMessageId ?? null;
    if (this.flaw === 'leaves a recorded draft on resume') draft = null;
    const done = ledger.finals.size > 0 && this.flaw !== 're-sends a recorded final on resume';
    for await (const ev of turn) {
      if (ev.type === 'text_delta' && !draft && !done) {
        draft = this.platform.post('…');
        await ledger.recordDraft(0, draft, { text: '…' });
      }
      if (ev.type !== 'turn_end' || done) continue;
      if (ev.reason === 'steered' && this.flaw !== 'answers a steered message') continue;
      const text = typeof ev.text === 'string' ? ev.text : '';
      let id: string;
      if (draft) {
        this.platform.edit(draft, text);
        id = draft;
      } else id = this.platform.post(text);
      await ledger.recordFinal(0, id, { text });
      if (this.flaw === 'ledgers the final twice') await ledger.recordFinal(0, id, { text });
    }
  }

  async notify(_to: ConversationRef, text: string): Promise<void> {
    try {
      this.platform.post(text);
    } catch (err) {
      if (this.flaw === 'notify throws') throw err;
    }
  }

  health() {
    return this.stops > 0 ? { state: 'down' as const, detail: 'stopped' } : { state: 'up' as const };
  }

  async stop(): Promise<void> {
    this.stops++;
    if (this.flaw !== 'stop leaves a timer running' && this.heartbeat) clearInterval(this.heartbeat);
    if (this.stops === 1) return;
    if (this.flaw === 'stop hangs on the second call') await new Promise<never>(() => undefined);
    if (this.flaw === 'stop throws on the second call') throw new Error('already stopped');
  }
}

function toyHarness(flaw: Flaw | null): ContractHarness {
  return {
    name: flaw ? `toy channel that ${flaw}` : 'toy channel',
    stopBudgetMs: 300,
    async setup(): Promise<ContractRig> {
      const env = new FakeChannelEnv();
      const platform = new ToyPlatform();
      const channel = new ToyChannel(platform, flaw);
      made.add(channel);
      let n = 0;
      const deliver = async (key: string, text: string) => {
        for (let attempt = 0; attempt < 5; attempt++) {
          try {
            await channel.receive(key, text, () => env.mark('ack', key));
            return;
          } catch {
            env.mark('nack', key);
          }
        }
        throw new Error(`toy platform: ${key} never acked`);
      };
      return {
        env,
        channel,
        conversation: CONV,
        steered: 'nothing',
        start: () => channel.start(env.contextFor(channel)),
        async inject(text) {
          const key = `u${++n}`;
          await deliver(key, text);
          return { dedupeKey: key, text, handle: key };
        },
        redeliver: (item) => deliver(item.dedupeKey, item.text),
        output: async () => platform.messages.filter((m) => !m.deleted).map((m) => ({ kind: 'message' as const, text: m.text, id: m.id })),
        seedDraft: async (text) => platform.post(text),
        message: async (id) => platform.messages.find((m) => m.id === id),
        async breakPlatform() {
          platform.failing = true;
          return async () => {
            platform.failing = false;
          };
        },
        close: () => env.close(),
      };
    },
  };
}

/** Which point each flaw must break. */
const BREAKS: Record<Flaw, ContractPoint> = {
  'acks before accept': 'accept before ack',
  'double turn on redelivery': 'a redelivery makes one turn',
  'ledgers the final twice': 'draft → final ledgered once',
  're-sends a recorded final on resume': 'resume edits or deletes a recorded draft and skips recorded finals',
  'leaves a recorded draft on resume': 'resume edits or deletes a recorded draft and skips recorded finals',
  'answers a steered message': 'a steered message gets the documented acknowledgement',
  'render throws': 'notify and render never throw',
  'notify throws': 'notify and render never throw',
  'stop hangs on the second call': 'stop is idempotent and prompt',
  'stop throws on the second call': 'stop is idempotent and prompt',
  'stop leaves a timer running': 'stop is idempotent and prompt',
};

/** Every toy channel made, so the test can clear what a flawed one left running. */
const made = new Set<ToyChannel>();
afterEach(() => {
  for (const c of made) if (c.heartbeat) clearInterval(c.heartbeat);
  made.clear();
});

runChannelContract(toyHarness(null));

describe('runChannelContract against deliberately broken channels', () => {
  for (const [flaw, point] of Object.entries(BREAKS) as Array<[Flaw, ContractPoint]>) {
    it(`a channel that ${flaw} fails "${point}" and only that point`, async () => {
      const failed: ContractPoint[] = [];
      for (const p of Object.keys(CONTRACT_POINTS) as ContractPoint[]) {
        const ok = await checkContractPoint(toyHarness(flaw), p).then(
          () => true,
          (err: unknown) => {
            expect(err).toBeInstanceOf(Error);
            expect((err as Error).name).toBe('AssertionError');
            return false;
          },
        );
        if (!ok) failed.push(p);
      }
      expect(failed).toEqual([point]);
    });
  }
});
