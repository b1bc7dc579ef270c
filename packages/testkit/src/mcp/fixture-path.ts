import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the compiled MCP fixture server (`packages/testkit/dist/mcp/fixture-server.js`).
 * Run it with `node <path>`; it speaks MCP over stdio. Set `MCP_FIXTURE_LOG` in its env to a file
 * path to get one line per `slow` event (`slow started ms=N`, `slow finished ms=N`, `slow cancelled ms=N`).
 */
export function mcpFixturePath(): string {
  // Resolved next to this module: dist/mcp/fixture-path.js -> dist/mcp/fixture-server.js.
  return fileURLToPath(new URL('./fixture-server.js', import.meta.url));
}
