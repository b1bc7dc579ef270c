export * from './options.js';
export * from './errors.js';
export * from './workspace-path.js';
export * from './text-file.js';
export * from './atomic-write.js';
export * from './glob.js';
export * from './walk.js';
export * from './read-file.js';
export * from './list-files.js';
export * from './search-files.js';
export * from './write-file.js';
export * from './edit-file.js';
export * from './file-tools.js';
// The MCP bridge (and the MCP SDK it loads) is a separate entry point, `@switchboard/tools/mcp`,
// imported only when MCP servers are configured; the config schema and names stay here.
export * from './mcp/mcp-config.js';
export * from './mcp/mcp-names.js';
export * from './mcp/mcp-result.js';
