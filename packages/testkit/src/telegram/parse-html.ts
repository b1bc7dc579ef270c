import { byteOffset, normalizeUrl, type ParseResult } from './parse-markdown-v2.js';
import type { TgMessageEntity } from './types.js';

const TAG_TYPES: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
};
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

interface Open {
  tag: string;
  attrs: Record<string, string>;
  start: number;
  language?: string;
}

const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);

/** Decodes the HTML entity at `src[i] === '&'`; undefined when it is not one Telegram knows. */
function decodeEntity(src: string, i: number): { ch: string; end: number } | undefined {
  const m = /^&(?:#x([0-9a-f]{1,6})|#(\d{1,7})|(lt|gt|amp|quot));/i.exec(src.slice(i, i + 12));
  if (!m) return undefined;
  const end = i + m[0].length;
  if (m[3] !== undefined) return { ch: NAMED[m[3].toLowerCase()] ?? '', end };
  const cp = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
  if (cp === 0 || cp > 0x10ffff) return undefined;
  return { ch: String.fromCodePoint(cp), end };
}

/**
 * Parses Bot API HTML like tdlib does: only the documented tags, `&lt; &gt; &amp; &quot;` and
 * numeric entities (any other `&` stays literal), properly nested end tags, every tag closed.
 */
export function parseHtml(src: string): ParseResult {
  let out = '';
  const entities: TgMessageEntity[] = [];
  const stack: Open[] = [];
  const n = src.length;
  const fail = (msg: string): ParseResult => ({ error: msg });
  for (let i = 0; i < n; i++) {
    const c = src[i] ?? '';
    if (c === '&') {
      const dec = decodeEntity(src, i);
      out += dec ? dec.ch : '&';
      if (dec) i = dec.end - 1;
      continue;
    }
    if (c !== '<') {
      out += c;
      continue;
    }
    const begin = i++;
    const at = byteOffset(src, begin);
    if (src[i] !== '/') {
      while (i < n && !isSpace(src[i]) && src[i] !== '>') i++;
      if (i >= n) return fail(`Unclosed start tag at byte offset ${at}`);
      const tag = src.slice(begin + 1, i).toLowerCase();
      if (TAG_TYPES[tag] === undefined) return fail(`Unsupported start tag "${tag}" at byte offset ${at}`);
      const attrs: Record<string, string> = {};
      while (src[i] !== '>') {
        while (isSpace(src[i])) i++;
        if (i >= n) return fail(`Unclosed start tag at byte offset ${at}`);
        if (src[i] === '>') break;
        const nameStart = i;
        while (i < n && !isSpace(src[i]) && src[i] !== '=' && src[i] !== '>') i++;
        const name = src.slice(nameStart, i).toLowerCase();
        if (name === '') return fail(`Empty attribute name in the tag "${tag}" at byte offset ${at}`);
        while (isSpace(src[i])) i++;
        if (src[i] !== '=') {
          if (i >= n) return fail(`Unclosed start tag at byte offset ${at}`);
          attrs[name] = '';
          continue;
        }
        i++;
        while (isSpace(src[i])) i++;
        if (i >= n) return fail(`Unclosed start tag at byte offset ${at}`);
        let value = '';
        const q = src[i];
        if (q === '"' || q === "'") {
          i++;
          while (i < n && src[i] !== q) {
            const dec = src[i] === '&' ? decodeEntity(src, i) : undefined;
            value += dec ? dec.ch : src[i];
            i = dec ? dec.end : i + 1;
          }
          if (i >= n) return fail(`Unclosed start tag at byte offset ${at}`);
          i++;
        } else {
          while (i < n && !isSpace(src[i]) && src[i] !== '>') value += src[i++];
        }
        attrs[name] = value;
      }
      if (tag === 'span' && attrs.class !== 'tg-spoiler') return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${at}`);
      stack.push({ tag, attrs, start: out.length });
      continue;
    }
    const open = stack.pop();
    if (open === undefined) return fail(`Unexpected end tag at byte offset ${at}`);
    i++;
    const nameStart = i;
    while (i < n && !isSpace(src[i]) && src[i] !== '>') i++;
    const endTag = src.slice(nameStart, i).toLowerCase();
    while (isSpace(src[i])) i++;
    if (src[i] !== '>') return fail(`Unclosed end tag at byte offset ${at}`);
    if (endTag !== '' && endTag !== open.tag) {
      return fail(`Unmatched end tag at byte offset ${at}, expected "</${open.tag}>", found "</${endTag}>"`);
    }
    const entity = toEntity(open, out.length, stack[stack.length - 1]);
    if (entity) entities.push(entity);
  }
  const top = stack[stack.length - 1];
  if (top !== undefined) return fail(`Can't find end tag corresponding to start tag "${top.tag}"`);
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: out, entities };
}

function toEntity(open: Open, end: number, parent: Open | undefined): TgMessageEntity | undefined {
  const length = end - open.start;
  if (length <= 0) return undefined;
  const base = { offset: open.start, length };
  switch (open.tag) {
    case 'a': {
      const url = normalizeUrl(open.attrs.href ?? '');
      return url === undefined ? undefined : { type: 'text_link', ...base, url };
    }
    case 'code': {
      const language = /^language-(.+)$/.exec(open.attrs.class ?? '')?.[1];
      if (parent?.tag === 'pre' && language !== undefined) {
        parent.language = language;
        return undefined;
      }
      return { type: 'code', ...base };
    }
    case 'pre':
      return { type: 'pre', ...base, ...(open.language !== undefined ? { language: open.language } : {}) };
    case 'blockquote':
      return { type: 'expandable' in open.attrs ? 'expandable_blockquote' : 'blockquote', ...base };
    case 'tg-emoji': {
      const id = open.attrs['emoji-id'];
      return id === undefined ? undefined : { type: 'custom_emoji', ...base, custom_emoji_id: id };
    }
    default:
      return { type: TAG_TYPES[open.tag] ?? open.tag, ...base };
  }
}
