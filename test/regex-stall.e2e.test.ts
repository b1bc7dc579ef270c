import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WsFrame } from '@switchboard/testkit';
import { hardRegexText } from '@switchboard/testkit';
import { collectTurn, personWorkspace, useGateway } from './helpers.js';

// Classic catastrophic-backtracking patterns, each with a line that makes a backtracking engine
// take longer than the age of the universe (the cost doubles with every character).
const CATASTROPHIC: Array<{ pattern: string; matches: boolean }> = [
  { pattern: '(a+)+$', matches: false },
  { pattern: '(.*.*)*~~~', matches: false },
  { pattern: '(a|aa)+$', matches: false },
  { pattern: '([a-zA-Z]+)*$', matches: true },
  { pattern: '^(\\w+\\s?)*$', matches: true },
  { pattern: '(x+x+)+y', matches: false },
  { pattern: '(\\d+|\\w+)*!!', matches: false },
];
const REDOS_TEXT = `${'a'.repeat(48)}!\n${'x'.repeat(48)}\n${'1a'.repeat(30)}!\nthe quick brown fox jumps over the lazy dog\n`;

// PostToolUse hook the test holds: the tool's `end` frame cannot come before the test lets it go,
// so "answered between start and end" is an ordering of events, not a race.
let hook: Server;
let hookPort: number;
let release: (() => void) | undefined;
let released: Promise<void> = Promise.resolve();
function holdNextTool() {
  released = new Promise<void>((r) => (release = r));
}

beforeAll(async () => {
  hook = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      void released.then(() => {
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookPort = (hook.address() as { port: number }).port;
});
afterAll(async () => {
  release?.();
  await new Promise<void>((r) => hook.close(() => r()));
});

const env = useGateway({
  config: () => ({
    limits: { regexDeadline: '300ms', regexMaxLength: 64 },
    permissions: { hookTimeout: '60s' },
    hooks: {
      PostToolUse: [{ type: 'http', matcher: 'search_files', url: `http://127.0.0.1:${hookPort}/hook` }],
      PostToolUseFailure: [{ type: 'http', matcher: 'search_files', url: `http://127.0.0.1:${hookPort}/hook` }],
    },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 100, perMinute: 600 } } } } },
  }),
  client: true,
});

let workspace: string;
beforeAll(() => {
  workspace = personWorkspace(env.gw);
  writeFileSync(join(workspace, 'redos.txt'), REDOS_TEXT);
});

type Block = { tool_use_id: string; content: string; is_error?: boolean };
const resultOf = (id: string): Block => {
  for (const r of env.fake.requests) {
    for (const m of (r.body as { messages: Array<{ content: Block[] | string }> }).messages) {
      if (Array.isArray(m.content)) {
        const hit = m.content.find((b) => b.tool_use_id === id);
        if (hit) return hit;
      }
    }
  }
  throw new Error(`no tool result for ${id}`);
};

/** Runs one scripted search_files call; returns the ordered events and the tool's result. */
async function searchTurn(id: string, input: Record<string, unknown>) {
  const { fake, ws, gw } = env;
  fake.enqueue({ toolUses: [{ name: 'search_files', input, id: `toolu_${id}` }] }, { text: `searched ${id}` });
  holdNextTool();
  const events: string[] = [];
  ws.send({ type: 'message', clientId: id, text: `search ${id}` });
  const start = await ws.next((f: WsFrame) => f.clientId === id && f.type === 'tool' && f.phase === 'start', 20_000);
  events.push(`start:${start.name}`);
  const health = await fetch(`${gw.url}/healthz`);
  events.push(`healthz:${health.status}`);
  release!();
  const turn = await collectTurn(ws, id, 20_000);
  const end = turn.frames.find((f) => f.type === 'tool' && f.phase === 'end');
  if (end) events.push(`end:${end.name}`);
  expect(turn.end).toMatchObject({ type: 'final', text: `searched ${id}` });
  return { events, result: resultOf(`toolu_${id}`) };
}

describe('search_files with catastrophic patterns', () => {
  for (const [i, { pattern, matches }] of CATASTROPHIC.entries()) {
    it(`keeps the gateway answering while searching for ${pattern}`, async () => {
      const { events, result } = await searchTurn(`redos${i}`, { pattern, path: 'redos.txt' });
      expect(events).toEqual(['start:search_files', 'healthz:200', 'end:search_files']);
      expect(result.is_error).toBeFalsy();
      if (matches) expect(result.content).toMatch(/^redos\.txt:\d+: /m);
      else expect(result.content).toContain(`No matches for /${pattern}/`);
    });
  }

  it('refuses backreferences and lookaround with an error naming what is unsupported', async () => {
    const back = await searchTurn('backref', { pattern: '(a)\\1' });
    expect(back.result.is_error).toBe(true);
    expect(back.result.content).toMatch(/backreference/);
    const look = await searchTurn('lookahead', { pattern: 'foo(?!bar)' });
    expect(look.result.is_error).toBe(true);
    expect(look.result.content).toMatch(/lookahead/);
  });

  it('refuses a pattern longer than limits.regexMaxLength, naming the key', async () => {
    const { result } = await searchTurn('toolong', { pattern: 'a'.repeat(65) });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('limits.regexMaxLength');
  });

  it('stops a linear but huge search at limits.regexDeadline: the worker is terminated and the model told', async () => {
    const text = hardText();
    writeFileSync(join(workspace, 'big.txt'), `${text}\n`);
    const { events, result } = await searchTurn('deadline', { pattern: '(a|b)*a(a|b){900}$', path: 'big.txt' });
    expect(events).toEqual(['start:search_files', 'healthz:200', 'end:search_files']);
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('limits.regexDeadline');
    expect(result.content).toContain('big.txt');
    await env.gw.waitForLog(/regex worker terminated/);
  });
});

const hardText = () => hardRegexText();
