import { parseHtml } from './parse-html.js';
import { byteOffset, parseMarkdownV2, type ParseResult } from './parse-markdown-v2.js';
import type { TgMessageEntity } from './types.js';

export { byteOffset, normalizeUrl, parseMarkdownV2, type ParseResult } from './parse-markdown-v2.js';
export { parseHtml } from './parse-html.js';

const LEGACY_TYPES: Record<string, string> = { '*': 'bold', _: 'italic', '`': 'code', '[': 'text_link' };

/** Legacy `Markdown`: `*bold* _italic_ \`code\` \`\`\`pre\`\`\` [text](url)`, no nesting. */
export function parseLegacyMarkdown(src: string): ParseResult {
  let out = '';
  const entities: TgMessageEntity[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i] ?? '';
    const next = src[i + 1];
    if (c === '\\' && next !== undefined && '_*`['.includes(next)) {
      out += next;
      i++;
      continue;
    }
    if (!'_*`['.includes(c)) {
      out += c;
      continue;
    }
    const fence = src.startsWith('```', i);
    const close = c === '[' ? ']' : fence ? '```' : c;
    const from = i + (fence ? 3 : 1);
    const end = src.indexOf(close, from);
    if (end < 0) return { error: `Can't find end of the entity starting at byte offset ${byteOffset(src, i)}` };
    const inner = src.slice(from, end);
    i = end + close.length - 1;
    const entity: TgMessageEntity = { type: fence ? 'pre' : (LEGACY_TYPES[c] ?? 'bold'), offset: out.length, length: inner.length };
    if (c === '[') {
      if (src[i + 1] !== '(') return { error: `Can't find end of the entity starting at byte offset ${byteOffset(src, from - 1)}` };
      const urlEnd = src.indexOf(')', i + 2);
      if (urlEnd < 0) return { error: `Can't find end of a URL at byte offset ${byteOffset(src, i + 2)}` };
      entity.url = src.slice(i + 2, urlEnd);
      i = urlEnd;
    }
    out += inner;
    if (inner.length > 0) entities.push(entity);
  }
  return { text: out, entities };
}

/** Drops leading/trailing white space as Telegram does, clipping entity ranges to what is left. */
export function trimFormatted(text: string, entities: TgMessageEntity[]): { text: string; entities: TgMessageEntity[] } {
  const lead = text.length - text.trimStart().length;
  const trimmed = text.trim();
  const kept: TgMessageEntity[] = [];
  for (const e of entities) {
    const start = Math.max(e.offset - lead, 0);
    const end = Math.min(e.offset + e.length - lead, trimmed.length);
    if (end > start) kept.push({ ...e, offset: start, length: end - start });
  }
  return { text: trimmed, entities: kept };
}

/** The entities Telegram detects in plain text: bot commands, @mentions and URLs (UTF-16 offsets). */
export function detectEntities(text: string): TgMessageEntity[] {
  const found: TgMessageEntity[] = [];
  const patterns: Array<[string, RegExp]> = [
    ['bot_command', /(?<![\w/])\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\w/])/g],
    ['mention', /(?<![\w@/])@[A-Za-z0-9_]{5,32}(?!\w)/g],
    ['url', /\bhttps?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]]/g],
  ];
  for (const [type, re] of patterns) {
    for (const m of text.matchAll(re)) found.push({ type, offset: m.index, length: m[0].length });
  }
  return found.sort((a, b) => a.offset - b.offset);
}

/**
 * Turns a `text` + `parse_mode`/`entities` pair into what Telegram stores: the visible text and
 * its entities. On failure `error` is the description after `Bad Request: `.
 */
export function formatMessageText(raw: string, parseMode: unknown, entities: unknown): ParseResult {
  if (Array.isArray(entities)) return trimFormatted(raw, entities as TgMessageEntity[]);
  let parsed: ParseResult;
  const mode = typeof parseMode === 'string' ? parseMode.toLowerCase() : '';
  if (parseMode === undefined || parseMode === null || mode === '') parsed = { text: raw, entities: [] };
  else if (mode === 'markdownv2') parsed = parseMarkdownV2(raw);
  else if (mode === 'html') parsed = parseHtml(raw);
  else if (mode === 'markdown') parsed = parseLegacyMarkdown(raw);
  else return { error: 'unsupported parse_mode' };
  if ('error' in parsed) return { error: `can't parse entities: ${parsed.error}` };
  const trimmed = trimFormatted(parsed.text, parsed.entities);
  const detected = detectEntities(trimmed.text).filter((d) => !trimmed.entities.some((e) => d.offset < e.offset + e.length && e.offset < d.offset + d.length));
  return { text: trimmed.text, entities: [...trimmed.entities, ...detected].sort((a, b) => a.offset - b.offset || b.length - a.length) };
}
