// The bare baseline: a plain `ws` server that, per `message` frame, streams one request from the
// model API with @anthropic-ai/sdk and sends the text back (deltas, then a final). No auth,
// storage, tools or query loop. Usage: node bench/baseline-server.mjs <modelUrl>
// Prints {"port":N,"pid":P} on stdout once listening; exits on SIGTERM/SIGINT or when stdin closes.
import Anthropic from '@anthropic-ai/sdk';
import { WebSocketServer } from 'ws';

const modelUrl = process.argv[2];
if (!modelUrl) {
  process.stderr.write('usage: node bench/baseline-server.mjs <modelUrl>\n');
  process.exit(2);
}
const client = new Anthropic({ apiKey: 'bench-baseline-key', baseURL: modelUrl, maxRetries: 0, timeout: 60_000 });
// The bench passes the gateway's system prompt and max_tokens so the two model requests match
// except for the tools and the history.
const SYSTEM = [{ type: 'text', text: process.env.BENCH_SYSTEM || 'You are a helpful assistant.' }];
const MAX_TOKENS = Number(process.env.BENCH_MAX_TOKENS) || 4096;

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1024 * 1024 });
let cursor = 0;

wss.on('connection', (socket) => {
  socket.on('error', () => undefined);
  socket.on('message', async (data) => {
    let frame;
    try {
      frame = JSON.parse(data.toString());
    } catch {
      socket.send(JSON.stringify({ type: 'error', code: 'bad_frame', message: 'Frames must be JSON objects.' }));
      return;
    }
    if (frame.type !== 'message' || typeof frame.text !== 'string') return;
    const { clientId } = frame;
    let text = '';
    try {
      const stream = await client.messages.create({
        model: 'claude-test',
        max_tokens: MAX_TOKENS,
        system: SYSTEM,
        messages: [{ role: 'user', content: [{ type: 'text', text: frame.text }] }],
        stream: true,
      });
      for await (const ev of stream) {
        if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') {
          text += ev.delta.text;
          socket.send(JSON.stringify({ type: 'delta', clientId, text: ev.delta.text }));
        }
      }
      socket.send(JSON.stringify({ type: 'final', clientId, text, reason: 'completed', cursor: ++cursor }));
    } catch (err) {
      socket.send(JSON.stringify({ type: 'error', code: 'model_error', clientId, message: String(err?.message ?? err), cursor: ++cursor }));
    }
  });
});

wss.on('listening', () => {
  process.stdout.write(`${JSON.stringify({ port: wss.address().port, pid: process.pid })}\n`);
});

const stop = () => {
  for (const c of wss.clients) c.terminate();
  wss.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
