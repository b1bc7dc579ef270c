/**
 * Request validation for the fake Messages API: the checks the real API makes that catch
 * gateway bugs (missing fields, role order, empty text, tool_use/tool_result pairing, tool names,
 * the `cache_control` rules of `anthropic-cache-rules.ts`).
 */
import { checkCacheControl } from './anthropic-cache-rules.js';

/** A validation failure, answered as 400 `invalid_request_error`. */
export interface ValidationFailure {
  message: string;
}

type Block = Record<string, unknown> & { type?: unknown };

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function blocksOf(content: unknown): Block[] {
  return Array.isArray(content) ? (content as Block[]) : [];
}

function checkTextBlocks(blocks: Block[], where: string): ValidationFailure | undefined {
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j];
    if (!isObject(b) || typeof b.type !== 'string') return { message: `${where}.${j}.type: Field required` };
    if (b.type !== 'text') continue;
    if (typeof b.text !== 'string') return { message: `${where}.${j}.text: Field required` };
    if (b.text === '') return { message: `${where}.${j}: text content blocks must be non-empty` };
    if (b.text.trim() === '') return { message: `${where}.${j}: text content blocks must contain non-whitespace text` };
  }
  return undefined;
}

function checkTools(tools: unknown): ValidationFailure | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return { message: 'tools: Input should be a valid list' };
  const names = new Set<string>();
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t)) return { message: `tools.${i}: Input should be a valid dictionary` };
    if (typeof t.type === 'string' && t.type !== 'custom') continue; // server tools carry a type and no schema
    if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
      return { message: `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'` };
    }
    if (!isObject(t.input_schema)) return { message: `tools.${i}.custom.input_schema: Field required` };
    if (names.has(t.name)) return { message: 'tools: Tool names must be unique.' };
    names.add(t.name);
  }
  return undefined;
}

function checkSystem(system: unknown): ValidationFailure | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system)) return { message: 'system: Input should be a valid string or list' };
  return checkTextBlocks(system as Block[], 'system');
}

/** Checks one message's own shape (role, non-empty content, text blocks, nested tool_result text). */
function checkMessage(m: unknown, i: number, isLast: boolean): ValidationFailure | undefined {
  if (!isObject(m)) return { message: `messages.${i}: Input should be a valid dictionary` };
  if (m.role !== 'user' && m.role !== 'assistant') {
    return { message: `messages.${i}.role: Input should be 'user' or 'assistant'` };
  }
  const finalAssistant = isLast && m.role === 'assistant';
  if (typeof m.content === 'string') {
    if (m.content === '' && !finalAssistant) {
      return { message: `messages.${i}: all messages must have non-empty content except for the optional final assistant message` };
    }
    return undefined;
  }
  if (!Array.isArray(m.content)) return { message: `messages.${i}.content: Input should be a valid string or list` };
  if (m.content.length === 0 && !finalAssistant) {
    return { message: `messages.${i}: all messages must have non-empty content except for the optional final assistant message` };
  }
  const blocks = m.content as Block[];
  const bad = checkTextBlocks(blocks, `messages.${i}.content`);
  if (bad) return bad;
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j] as Block;
    if (b.type === 'tool_use' && m.role !== 'assistant') {
      return { message: `messages.${i}.content.${j}: \`tool_use\` blocks can only be in \`assistant\` messages` };
    }
    if (b.type === 'tool_result' && m.role !== 'user') {
      return { message: `messages.${i}.content.${j}: \`tool_result\` blocks can only be in \`user\` messages` };
    }
    if (b.type === 'tool_use' && (typeof b.id !== 'string' || typeof b.name !== 'string' || !isObject(b.input))) {
      return { message: `messages.${i}.content.${j}.tool_use: id, name and input (an object) are required` };
    }
    if (b.type === 'image') {
      const bad = checkImageBlock(b, m.role, `messages.${i}.content.${j}`);
      if (bad) return bad;
    }
    if (b.type === 'tool_result') {
      if (typeof b.tool_use_id !== 'string') return { message: `messages.${i}.content.${j}.tool_result.tool_use_id: Field required` };
      const nested = checkTextBlocks(blocksOf(b.content), `messages.${i}.content.${j}.content`);
      if (nested) return nested;
    }
  }
  return undefined;
}

/** The tool_use/tool_result pairing rule between consecutive messages. */
function checkPairing(messages: unknown[]): ValidationFailure | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role: string; content: unknown };
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const ids = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string);
      for (const id of ids) {
        if (seen.has(id)) return { message: `messages.${i}: \`tool_use\` ids must be unique` };
        seen.add(id);
      }
      if (ids.length === 0) continue;
      const next = messages[i + 1] as { content: unknown } | undefined;
      const answered = new Set<string>();
      for (const b of blocksOf(next?.content)) {
        if (b.type !== 'tool_result') break; // results must come first in the next message
        answered.add(b.tool_use_id as string);
      }
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return {
          message:
            `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        };
      }
    } else {
      const prev = messages[i - 1] as { role: string; content: unknown } | undefined;
      const prevIds = new Set(
        blocksOf(prev?.content)
          .filter((b) => b.type === 'tool_use')
          .map((b) => b.id as string),
      );
      for (let j = 0; j < blocks.length; j++) {
        const b = blocks[j] as Block;
        if (b.type === 'tool_result' && !prevIds.has(b.tool_use_id as string)) {
          return {
            message:
              `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          };
        }
      }
    }
  }
  return undefined;
}

/** Validates a parsed `POST /v1/messages` body; returns the first failure or undefined. */
export function validateMessagesRequest(body: unknown): ValidationFailure | undefined {
  if (!isObject(body)) return { message: 'Input should be a valid dictionary' };
  if (typeof body.model !== 'string' || body.model === '') return { message: 'model: Field required' };
  if (body.max_tokens === undefined) return { message: 'max_tokens: Field required' };
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return { message: 'max_tokens: Input should be a valid integer greater than or equal to 1' };
  }
  if (body.messages === undefined) return { message: 'messages: Field required' };
  if (!Array.isArray(body.messages)) return { message: 'messages: Input should be a valid list' };
  const messages = body.messages as unknown[];
  if (messages.length === 0) return { message: 'messages: at least one message is required' };
  for (let i = 0; i < messages.length; i++) {
    const bad = checkMessage(messages[i], i, i === messages.length - 1);
    if (bad) return bad;
    const role = (messages[i] as { role: string }).role;
    if (i === 0 && role !== 'user') return { message: 'messages: first message must use the "user" role' };
    const prevRole = i > 0 ? (messages[i - 1] as { role: string }).role : undefined;
    if (prevRole === role) {
      return { message: `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row` };
    }
  }
  return checkSystem(body.system) ?? checkTools(body.tools) ?? checkPairing(messages) ?? checkCacheControl(body);
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** The API takes at most 5 MB per image (decoded). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** An `image` block as the Messages API checks it: user content only, a base64 source of a supported type within 5 MB. */
function checkImageBlock(b: Block, role: string, where: string): { message: string } | undefined {
  if (role !== 'user') return { message: `${where}: \`image\` blocks can only be in \`user\` messages` };
  const source = (b as { source?: unknown }).source;
  if (!isObject(source)) return { message: `${where}.image.source: Field required` };
  const s = source as { type?: unknown; media_type?: unknown; data?: unknown };
  if (s.type !== 'base64' && s.type !== 'url') return { message: `${where}.image.source.type: Input should be 'base64' or 'url'` };
  if (s.type === 'url') return undefined;
  if (typeof s.media_type !== 'string' || !IMAGE_TYPES.has(s.media_type)) {
    return { message: `${where}.image.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'` };
  }
  if (typeof s.data !== 'string' || s.data === '' || !/^[A-Za-z0-9+/]+={0,2}$/u.test(s.data))
    return { message: `${where}.image.source.data: invalid base64 data` };
  if (Buffer.from(s.data, 'base64').length > MAX_IMAGE_BYTES) return { message: `${where}.image.source.base64: image exceeds 5 MB maximum` };
  return undefined;
}
