import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { bridgeOf, ctx, tool } from './helpers.js';

let http: Server | undefined;

afterEach(async () => {
  http?.closeAllConnections(); // fetch keeps connections alive
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  http = undefined;
});

/** A stateless Streamable HTTP MCP server with one `shout` tool that demands a bearer token. */
async function startHttpServer(): Promise<string> {
  http = createServer((req, res) => {
    if (req.headers.authorization !== 'Bearer t0ken') {
      res.writeHead(401).end();
      return;
    }
    const server = new McpServer({ name: 'http-fixture', version: '0.1.0' });
    server.registerTool(
      'shout',
      { description: 'Upper-cases text.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
      async ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http!.address() as AddressInfo).port}/mcp`;
}

describe('MCP bridge over Streamable HTTP', () => {
  it('lists and calls tools, sending the configured headers', async () => {
    const url = await startHttpServer();
    const bridge = await bridgeOf({ web: { url, headers: { authorization: 'Bearer t0ken' }, trustAnnotations: true } });
    expect(bridge.status()).toEqual([{ server: 'web', state: 'up', tools: 1 }]);
    const shout = tool(bridge, 'mcp__web__shout');
    expect(shout.readOnly).toBe(true);
    expect(await shout.call({ text: 'hi' }, ctx())).toEqual({ content: 'HI' });
  });

  it('fails a server that rejects the client', async () => {
    const url = await startHttpServer();
    const bridge = await bridgeOf({ web: { url } });
    expect(bridge.status()).toEqual([{ server: 'web', state: 'failed', tools: 0, error: expect.any(String) }]);
    expect(bridge.tools).toEqual([]);
  });
});
