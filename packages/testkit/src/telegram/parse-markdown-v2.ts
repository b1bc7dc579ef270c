import type { TgMessageEntity } from './types.js';

/** Parsed text with entities (UTF-16 offsets), or the tdlib-style reason parsing failed. */
export type ParseResult = { text: string; entities: TgMessageEntity[] } | { error: string };

const RESERVED = '_*[]()~`>#+-=|{}.!';
const TYPE_NAMES: Record<string, string> = {
  bold: 'Bold',
  italic: 'Italic',
  underline: 'Underline',
  strikethrough: 'Strikethrough',
  spoiler: 'Spoiler',
  code: 'Code',
  pre: 'Pre',
  text_link: 'TextUrl',
  custom_emoji: 'CustomEmoji',
};

/** UTF-8 byte offset of the UTF-16 index `i` of `s` (Telegram reports byte offsets). */
export function byteOffset(s: string, i: number): number {
  return Buffer.byteLength(s.slice(0, i), 'utf8');
}

/** Telegram's URL check, loosely: http(s)/tg/ton URLs or a bare domain (which gets `http://`). */
export function normalizeUrl(url: string): string | undefined {
  const u = url.trim();
  if (/^(https?|tg|ton):\/\/[^\s]+$/i.test(u)) return u;
  if (/^[\w-]+(\.[\w-]+)+(:\d+)?(\/\S*)?$/.test(u)) return `http://${u}`;
  return undefined;
}

interface Open {
  type: string;
  start: number;
  srcPos: number;
  language?: string;
}

function closes(type: string, c: string, next: string, next2: string): boolean {
  switch (type) {
    case 'bold':
      return c === '*';
    case 'italic':
      return c === '_' && next !== '_';
    case 'underline':
      return c === '_' && next === '_';
    case 'strikethrough':
      return c === '~';
    case 'spoiler':
      return c === '|' && next === '|';
    case 'code':
      return c === '`';
    case 'pre':
      return c === '`' && next === '`' && next2 === '`';
    default: // text_link, custom_emoji
      return c === ']';
  }
}

/**
 * Parses Bot API MarkdownV2 like tdlib does: `\` escapes any ASCII character; every reserved
 * character `_*[]()~\`>#+-=|{}.!` outside an entity must be escaped (inside code/pre only `` ` ``
 * and `\`); `>` at a line start opens a block quote; an unclosed entity fails.
 */
export function parseMarkdownV2(src: string): ParseResult {
  let out = '';
  const entities: TgMessageEntity[] = [];
  const stack: Open[] = [];
  let quoteStart: number | undefined;
  const at = (k: number): string => src[k] ?? '';
  const reservedError = (c: string): ParseResult => ({ error: `Character '${c}' is reserved and must be escaped with the preceding '\\'` });
  for (let i = 0; i < src.length; i++) {
    const c = src[i] ?? '';
    const top = stack[stack.length - 1];
    const inCode = top !== undefined && (top.type === 'code' || top.type === 'pre');
    if (!inCode && (i === 0 || src[i - 1] === '\n')) {
      if (c === '>') {
        quoteStart ??= out.length;
        continue;
      }
      if (quoteStart !== undefined) {
        const end = out.endsWith('\n') ? out.length - 1 : out.length;
        if (end > quoteStart) entities.push({ type: 'blockquote', offset: quoteStart, length: end - quoteStart });
        quoteStart = undefined;
      }
    }
    const code = src.charCodeAt(i + 1);
    if (c === '\\' && code > 0 && code <= 126) {
      out += src[++i];
      continue;
    }
    if (!(inCode ? '`' : RESERVED).includes(c)) {
      out += c;
      continue;
    }
    if (top === undefined || !closes(top.type, c, at(i + 1), at(i + 2))) {
      if (inCode) return reservedError(c);
      const srcPos = i;
      let type: string;
      let language: string | undefined;
      switch (c) {
        case '_':
          type = at(i + 1) === '_' ? 'underline' : 'italic';
          if (type === 'underline') i++;
          break;
        case '*':
          type = 'bold';
          break;
        case '~':
          type = 'strikethrough';
          break;
        case '|':
          if (at(i + 1) !== '|') return reservedError(c);
          i++;
          type = 'spoiler';
          break;
        case '[':
          type = 'text_link';
          break;
        case '!':
          if (at(i + 1) !== '[') return reservedError(c);
          i++;
          type = 'custom_emoji';
          break;
        case '`':
          if (at(i + 1) === '`' && at(i + 2) === '`') {
            i += 3;
            type = 'pre';
            let end = i;
            while (end < src.length && !/\s/.test(at(end)) && at(end) !== '`') end++;
            if (end !== i && end < src.length && at(end) !== '`') {
              language = src.slice(i, end);
              i = end;
            }
            if (at(i) === '\n' || at(i) === '\r') i += (at(i + 1) === '\n' || at(i + 1) === '\r') && at(i) !== at(i + 1) ? 2 : 1;
            i--;
          } else {
            type = 'code';
          }
          break;
        default:
          return reservedError(c);
      }
      stack.push({ type, start: out.length, srcPos, ...(language !== undefined ? { language } : {}) });
      continue;
    }
    const open = stack.pop() as Open;
    let skip = out.length === open.start;
    const entity: TgMessageEntity = { type: open.type, offset: open.start, length: out.length - open.start };
    if (open.type === 'underline' || open.type === 'spoiler') i++;
    if (open.type === 'pre') {
      i += 2;
      if (open.language !== undefined) entity.language = open.language;
    }
    if (open.type === 'text_link' || open.type === 'custom_emoji') {
      let url = '';
      if (at(i + 1) !== '(') {
        url = out.slice(open.start);
      } else {
        i += 2;
        const begin = i;
        while (i < src.length && src[i] !== ')') {
          const n = src.charCodeAt(i + 1);
          if (src[i] === '\\' && n > 0 && n <= 126) {
            url += src[i + 1];
            i += 2;
          } else {
            url += src[i++];
          }
        }
        if (src[i] !== ')') return { error: `Can't find end of a URL at byte offset ${byteOffset(src, begin)}` };
      }
      if (open.type === 'custom_emoji') {
        const id = /^tg:\/\/emoji\?id=(\d+)$/.exec(url)?.[1];
        if (id === undefined) return { error: `Custom emoji entity must contain a tg://emoji URL` };
        entity.custom_emoji_id = id;
      } else {
        const normalized = normalizeUrl(url);
        if (normalized === undefined) skip = true;
        else entity.url = normalized;
      }
    }
    if (!skip) entities.push(entity);
  }
  const top = stack[stack.length - 1];
  if (top !== undefined) {
    return { error: `Can't find end of ${TYPE_NAMES[top.type] ?? top.type} entity at byte offset ${byteOffset(src, top.srcPos)}` };
  }
  if (quoteStart !== undefined && out.length > quoteStart) entities.push({ type: 'blockquote', offset: quoteStart, length: out.length - quoteStart });
  return { text: out, entities };
}
