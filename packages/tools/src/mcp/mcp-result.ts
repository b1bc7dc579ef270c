import type { ToolResult } from '@switchboard/agent';

type Block = { type?: unknown; [key: string]: unknown };

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return str(block.text) ?? '';
    case 'image':
      return `[image: ${str(block.mimeType) ?? 'unknown'}]`;
    case 'audio':
      return `[audio: ${str(block.mimeType) ?? 'unknown'}]`;
    case 'resource': {
      const res = (block.resource ?? {}) as Block;
      const head = `[resource: ${str(res.uri) ?? 'unknown'}]`;
      const text = str(res.text);
      return text !== undefined ? `${head}\n${text}` : head;
    }
    case 'resource_link':
      return `[resource: ${str(block.uri) ?? 'unknown'}]`;
    default:
      return `[${String(block.type)} content]`;
  }
}

/**
 * Converts an MCP `tools/call` result to a {@link ToolResult}: text blocks joined by newlines,
 * images/audio summarized as `[image: <mime>]`, resources as `[resource: <uri>]` (followed by an
 * embedded text resource's text). With no content, structured content is given as JSON.
 */
export function mcpResultToToolResult(result: Record<string, unknown>): ToolResult {
  const isError = result.isError === true;
  let content: string;
  if (Array.isArray(result.content) && result.content.length > 0) {
    content = (result.content as Block[]).map(blockText).join('\n');
  } else if (result.structuredContent !== undefined) {
    content = JSON.stringify(result.structuredContent);
  } else if ('toolResult' in result) {
    content = typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  } else {
    content = '';
  }
  return isError ? { content, isError: true } : { content };
}
