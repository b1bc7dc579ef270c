#!/usr/bin/env node
/**
 * A real MCP server over stdio, for tests of the MCP bridge:
 * `node packages/testkit/dist/mcp/fixture-server.js`.
 *
 * Tools:
 * - `echo` (readOnlyHint) — returns its `text` argument.
 * - `slow` — waits `ms` milliseconds, honouring cancellation, then returns `slept N ms`. Appends
 *   `slow started ms=N` / `slow finished ms=N` / `slow cancelled ms=N` lines to `$MCP_FIXTURE_LOG`.
 * - `fail` — returns `isError: true` content.
 * - `mixed` (readOnlyHint) — returns text, image and resource blocks.
 * - `env` (readOnlyHint) — returns the sorted names of its environment variables, one a line.
 * - `big` (readOnlyHint) — returns `chars` characters (`0123456789` repeated).
 * - with `MCP_FIXTURE_EXTRA_TOOLS=N` in its env: N more read-only tools, `catalog_01` … `catalog_NN`
 *   (see {@link registerCatalogTools}), each with a few described parameters (a realistic schema size)
 *   and its own keyword in its description (`catalog_07` looks up "record set 7 (topic-7)").
 *
 * Not exported from the testkit index: importing it would start a server.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const logPath = process.env.MCP_FIXTURE_LOG;

function note(line: string): void {
  if (logPath) appendFileSync(logPath, `${line}\n`);
}

const server = new McpServer({ name: 'switchboard-fixture', version: '0.1.0' });

server.registerTool(
  'echo',
  {
    description: 'Returns its text argument unchanged.',
    inputSchema: { text: z.string().describe('What to echo') },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

server.registerTool(
  'slow',
  {
    description: 'Waits ms milliseconds, then says so.',
    inputSchema: { ms: z.number().int().min(0).describe('How long to wait') },
  },
  async ({ ms }, extra) => {
    note(`slow started ms=${ms}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        extra.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      function onAbort(): void {
        clearTimeout(timer);
        note(`slow cancelled ms=${ms}`);
        reject(new Error('cancelled'));
      }
      if (extra.signal.aborted) onAbort();
      else extra.signal.addEventListener('abort', onAbort, { once: true });
    });
    note(`slow finished ms=${ms}`);
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  },
);

server.registerTool('fail', { description: 'Always fails (as a tool-level error).', inputSchema: {} }, async () => ({
  content: [{ type: 'text', text: 'the fixture failed on purpose' }],
  isError: true,
}));

server.registerTool('mixed', { description: 'Returns text, image and resource blocks.', annotations: { readOnlyHint: true } }, async () => ({
  content: [
    { type: 'text', text: 'first' },
    { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'file:///fixture/notes.txt', text: 'embedded notes' } },
    { type: 'resource_link', uri: 'file:///fixture/other.txt', name: 'other' },
    { type: 'text', text: 'last' },
  ],
}));

server.registerTool('env', { description: 'Lists the names of the environment variables the server sees.', annotations: { readOnlyHint: true } }, async () => ({
  content: [{ type: 'text', text: Object.keys(process.env).sort().join('\n') }],
}));

server.registerTool(
  'big',
  {
    description: 'Returns chars characters.',
    inputSchema: { chars: z.number().int().min(0).max(10_000_000).describe('How many characters') },
    annotations: { readOnlyHint: true },
  },
  async ({ chars }) => ({ content: [{ type: 'text', text: '0123456789'.repeat(Math.ceil(chars / 10)).slice(0, chars) }] }),
);

/**
 * N read-only catalog tools with realistic schemas. `catalog_<NN>` answers
 * `catalog_<NN> found <query> (limit <limit>)`.
 */
function registerCatalogTools(n: number): void {
  for (let i = 1; i <= n; i++) {
    const name = `catalog_${String(i).padStart(2, '0')}`;
    server.registerTool(
      name,
      {
        description: `Looks up entries in record set ${i} (topic-${i}) of the fixture catalog and returns the matching entries.`,
        inputSchema: {
          query: z.string().describe(`Words to look for in record set ${i}`),
          limit: z.number().int().min(1).max(100).optional().describe('How many entries to return at most'),
          sort: z.enum(['relevance', 'newest', 'oldest']).optional().describe('The order of the entries'),
          fields: z.array(z.string()).optional().describe('Which fields of each entry to return (default: all)'),
        },
        annotations: { readOnlyHint: true },
      },
      async ({ query, limit }) => ({ content: [{ type: 'text', text: `${name} found ${query} (limit ${limit ?? 10})` }] }),
    );
  }
}

registerCatalogTools(Math.max(0, Math.min(500, Number(process.env.MCP_FIXTURE_EXTRA_TOOLS ?? 0) || 0)));

// Exit when the client goes away (stdin closes), even with a `slow` call pending.
process.stdin.on('end', () => process.exit(0));

await server.connect(new StdioServerTransport());
