import { describe, expect, it } from 'vitest';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// An open room: anyone may talk, including senders the gateway has no principal for.
const env = useWebhookGateway(
  { main: { dmPolicy: 'allowlist', allowFrom: ['alice'], groups: { 'room-1': { requireMention: false } } } },
  { agents: { default: { mode: 'bypassPermissions' } } },
);

type Block = { type: string; tool_use_id?: string; content?: string; is_error?: boolean };
type Body = { tools?: Array<{ name: string }>; messages: Array<{ role: string; content: Block[] | string }> };

describe('room sessions', () => {
  it('a sender without a principal gets no file tools: none offered, a call refused', async () => {
    const { fake, gw, platform } = env;
    const start = fake.requests.length;
    fake.enqueue(
      {
        toolUses: [
          { name: 'read_file', input: { path: 'anything.txt' }, id: 'toolu_room_r' },
          { name: 'write_file', input: { path: 'x.txt', content: 'x' }, id: 'toolu_room_w' },
        ],
      },
      { text: 'room answered' },
    );
    const m = { id: 'room-msg-1', sender: { id: 'carol' }, conversation: { id: 'room-1', kind: 'room' }, text: 'read a file please' };
    const res = await platform.send(gw, m);
    expect(res.json.gate).toBe('admitted');
    const reply = await platform.waitFor(replyTo('room-msg-1'));
    expect(reply.body).toMatchObject({ text: 'room answered' });
    const first = fake.requests[start]!.body as Body;
    const offered = (first.tools ?? []).map((t) => t.name);
    for (const name of ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file']) expect(offered).not.toContain(name);
    const results = (fake.requests[start + 1]!.body as Body).messages.at(-1)!.content as Block[];
    expect(results.map((b) => [b.tool_use_id, b.is_error])).toEqual([
      ['toolu_room_r', true],
      ['toolu_room_w', true],
    ]);
  });
});
