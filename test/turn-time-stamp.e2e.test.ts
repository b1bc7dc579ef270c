import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, runCli, type RecordedBlock } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

let hookServer: Server;
let hookPort: number;
const prompts: string[] = [];

// The UserPromptSubmit hook is up before the gateway starts (registered before useGateway's beforeAll).
beforeAll(async () => {
  hookServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as { prompt?: unknown };
      if (typeof body.prompt === 'string') prompts.push(body.prompt);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookPort = (hookServer.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => hookServer.close(() => r()));
});

const env = useGateway({
  client: true,
  config: () => ({
    agents: { default: { timezone: 'Asia/Tokyo' } },
    hooks: { UserPromptSubmit: [{ type: 'http', url: `http://127.0.0.1:${hookPort}/hook` }] },
  }),
});

/** `YYYY-MM-DD HH:mm` of an instant in Asia/Tokyo (UTC+9, no daylight saving time). */
const tokyo = (d: Date) => new Date(d.getTime() + 9 * 3600_000).toISOString().slice(0, 16).replace('T', ' ');
const STAMP = /^Current time: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) Asia\/Tokyo \((Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\)$/;

describe('the date and time are stamped into the user entry when a turn starts', () => {
  it('the last user message starts with the stamp, then the text; earlier messages stay byte-identical; hooks and the transcript show the text', async () => {
    const { gw, ws, fake } = env;
    const before = new Date();
    const first = await chat(ws, 'ts1', 'what day is it?');
    expect(first.end.type, JSON.stringify(first.end)).toBe('final');
    const firstRequest = fake.requests.at(-1)!;
    const firstMessages = firstRequest.body.messages!;
    const opening = firstMessages.at(-1)!;
    expect(opening.role).toBe('user');
    const blocks = opening.content as RecordedBlock[];
    expect(blocks).toHaveLength(2);
    expect(blocks[1]).toMatchObject({ type: 'text', text: 'what day is it?' });
    const stamp = String(blocks[0]!.text);
    const match = STAMP.exec(stamp);
    expect(match, stamp).not.toBeNull();
    const after = new Date();
    expect(match![1]! >= tokyo(before) && match![1]! <= tokyo(after), `${match![1]} within ${tokyo(before)}..${tokyo(after)}`).toBe(true);
    // The fake echoes the last text block: the person's text, not the stamp.
    expect(first.deltas.join('')).toBe('echo: what day is it?');

    const second = await chat(ws, 'ts2', 'and the time?');
    expect(second.end.type, JSON.stringify(second.end)).toBe('final');
    const secondMessages = fake.requests.at(-1)!.body.messages!;
    // Prefix stability: the first turn's messages are sent again exactly as before (the rolling
    // cache breakpoint moved off the first user message, so compare without cache_control).
    const strip = (m: unknown) => JSON.stringify(m, (k, v) => (k === 'cache_control' ? undefined : v));
    expect(strip(secondMessages[0])).toBe(strip(firstMessages[0]));
    expect(secondMessages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: stamp },
        { type: 'text', text: 'what day is it?' },
      ],
    });
    const latest = secondMessages.at(-1)!.content as RecordedBlock[];
    expect(latest).toHaveLength(2);
    expect(String(latest[0]!.text)).toMatch(STAMP);
    expect(latest[1]).toMatchObject({ type: 'text', text: 'and the time?' });

    // The UserPromptSubmit hooks saw the person's text only.
    expect(prompts).toEqual(['what day is it?', 'and the time?']);
    // The control API transcript keeps the person's text as the entry's content, the stamp beside it.
    const token = gw.credentials().operatorToken;
    const sessions = (await api(gw, 'GET', `/api/v1/sessions?principalId=${gw.credentials().principalId}`, { token })).json as {
      sessions: Array<{ id: string }>;
    };
    const transcript = (await api(gw, 'GET', `/api/v1/sessions/${sessions.sessions[0]!.id}/transcript`, { token })).json as {
      entries: Array<{ kind: string; payload: { content: unknown; stamp?: string } }>;
    };
    const users = transcript.entries.filter((e) => e.kind === 'user');
    expect(users.map((e) => e.payload.content)).toEqual([[{ type: 'text', text: 'what day is it?' }], [{ type: 'text', text: 'and the time?' }]]);
    expect(users[0]!.payload.stamp).toBe(stamp);
  });
});

describe('agents.<id>.timezone', () => {
  it('an unknown time zone exits 78 naming the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-timezone-'));
    const file = join(dir, 'switchboard.json5');
    writeFileSync(file, `{ gateway: { port: 0 }, agents: { default: { timezone: "Mars/Olympus_Mons" } } }`);
    const r = await runCli(['start'], { configPath: file, timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/agents\.default\.timezone: expected an IANA time zone/);
  });
});
