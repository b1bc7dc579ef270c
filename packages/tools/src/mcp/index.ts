export * from './mcp-config.js';
export * from './mcp-names.js';
export * from './mcp-result.js';
export * from './mcp-tool.js';
export * from './mcp-bridge.js';
