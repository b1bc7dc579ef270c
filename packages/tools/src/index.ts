export {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_LINE_CHARS,
  DEFAULT_MAX_LIST_ENTRIES,
  DEFAULT_MAX_RESULT_CHARS,
  DEFAULT_MAX_SEARCH_MATCHES,
  DEFAULT_MAX_WRITE_BYTES,
  type FileToolsOptions,
  MIB,
} from './options.js';
export { errnoCode, FileToolError, type FileToolErrorCode, fsError, hardLinkError, PATH_ESCAPE_HINT, PathEscapeError, throwIfAborted } from './errors.js';
export {
  confinedPath,
  confinedReadPath,
  isWithin,
  joinRelative,
  normalizeUserPath,
  readOnlyDirectoryTool,
  resolveForRead,
  resolveInWorkspace,
  type ResolveOptions,
  type WorkspacePath,
} from './workspace-path.js';
export { BINARY_SNIFF_BYTES, formatBytes, type LoadedText, loadText, looksBinary, readTextFile } from './text-file.js';
export { type AtomicWriteOptions, makeParentDirs, writeFileAtomic } from './atomic-write.js';
export { compileNameGlob } from './glob.js';
export { walk, type WalkEntry, type WalkOptions, withheldNote } from './walk.js';
export { createReadFileTool, type ReadFileInput } from './read-file.js';
export { createListFilesTool, type ListFilesInput } from './list-files.js';
export { createSearchFilesTool, type SearchFilesInput } from './search-files.js';
export { createWriteFileTool, type WriteFileInput } from './write-file.js';
export { createEditFileTool, type EditFileInput } from './edit-file.js';
export { createFileTools } from './file-tools.js';
export { createSendFileTool, DEFAULT_SEND_FILE_MAX_BYTES, mimeTypeOf, type SendFileInput, type SendFileToolOptions } from './send-file.js';
// The MCP bridge (and the MCP SDK it loads) is a separate entry point, `@switchboard/tools/mcp`,
// imported only when MCP servers are configured; the config schema and names stay here.
export {
  type ConnectMcpOptions,
  MCP_DEFAULT_CALL_TIMEOUT_MS,
  type McpHttpServerConfig,
  McpHttpServerConfigSchema,
  type McpLog,
  type McpServerConfig,
  McpServerConfigSchema,
  type McpServerStatus,
  type McpStdioServerConfig,
  McpStdioServerConfigSchema,
} from './mcp/mcp-config.js';
export { mcpToolName, sanitizeToolNamePart } from './mcp/mcp-names.js';
export { mcpResultToToolResult } from './mcp/mcp-result.js';
// The exec sandbox (bubblewrap runner); not yet wired into the registry.
export * from './exec/sandbox.js';
export * from './web/index.js';
