#!/usr/bin/env node
// A minimal chat client for the quick start: sends one message as the owner (or whoever the
// client token belongs to) and prints the answer as it streams.
//
//   SWITCHBOARD_CLIENT_TOKEN="$(node -p 'require("./data/credentials.json").clientToken')" node scripts/chat.mjs "hello"
//
// The gateway's address comes from `--url ws://host:port/ws`, else from the endpoint file the
// running gateway writes (`$SWITCHBOARD_DATA_DIR/endpoint`, default ./data/endpoint), else
// ws://127.0.0.1:7420/ws. Every message gets a fresh clientId. Exit code 0 on an answer, 1 on an
// error frame, 2 on a usage or connection problem.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

function fail(message, code = 2) {
  process.stderr.write(`chat: ${message}\n`);
  process.exit(code);
}

let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { url: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
} catch (err) {
  fail(err.message);
}
if (parsed.values.help) {
  process.stdout.write('usage: SWITCHBOARD_CLIENT_TOKEN=<client token> node scripts/chat.mjs [--url ws://host:port/ws] <message…>\n');
  process.exit(0);
}
const text = parsed.positionals.join(' ');
if (!text) fail('say something: node scripts/chat.mjs "hello"');
const token = process.env.SWITCHBOARD_CLIENT_TOKEN;
if (!token) fail(`SWITCHBOARD_CLIENT_TOKEN is not set (the first start wrote one: node -p 'require("./data/credentials.json").clientToken')`);

function endpointUrl() {
  const file = join(process.env.SWITCHBOARD_DATA_DIR || './data', 'endpoint');
  try {
    const url = JSON.parse(readFileSync(file, 'utf8')).url;
    if (typeof url === 'string') return `${url.replace(/\/$/, '').replace(/^http/, 'ws')}/ws`;
  } catch {
    // no running gateway wrote one here: the default address
  }
  return 'ws://127.0.0.1:7420/ws';
}

const url = parsed.values.url ?? endpointUrl();
const clientId = randomUUID();
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
let streamed = false;
ws.on('unexpected-response', (_req, res) =>
  fail(`${url} answered ${res.statusCode}${res.statusCode === 401 ? ': the token was refused (is it a client token of this gateway?)' : ''}`),
);
ws.on('error', (err) => fail(`cannot reach ${url}: ${err.message} (is the gateway running?)`));
ws.on('open', () => ws.send(JSON.stringify({ type: 'message', clientId, text })));
ws.on('close', (code, reason) => fail(`the gateway closed the connection (${code}${reason.length ? ` ${reason}` : ''})`));
ws.on('message', (data) => {
  let frame;
  try {
    frame = JSON.parse(String(data));
  } catch {
    return;
  }
  if (frame.clientId !== clientId) return;
  if (frame.type === 'delta' && typeof frame.text === 'string') {
    streamed = true;
    process.stdout.write(frame.text);
  } else if (frame.type === 'final') {
    process.stdout.write(`${streamed ? '' : (frame.text ?? '')}\n`);
    process.exit(0);
  } else if (frame.type === 'error' && frame.cursor !== undefined) {
    if (streamed) process.stdout.write('\n');
    process.stderr.write(`error ${frame.code}: ${frame.message}\n`);
    process.exit(1);
  } else if (frame.type === 'error') {
    fail(`error ${frame.code}: ${frame.message}`, 1);
  }
});
