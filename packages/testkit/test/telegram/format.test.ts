import { describe, expect, it } from 'vitest';
import { detectEntities, formatMessageText, parseHtml, parseLegacyMarkdown, parseMarkdownV2 } from '../../src/index.js';

describe('Telegram text formatting (tdlib-like)', () => {
  it('MarkdownV2: entities, escapes, nesting, links, pre with language, block quotes', () => {
    expect(parseMarkdownV2('*b _bi_* __u__ ~s~ ||sp|| `c\\`d` [t](https://x\\.io/a\\)b)')).toEqual({
      text: 'b bi u s sp c`d t',
      entities: [
        { type: 'italic', offset: 2, length: 2 },
        { type: 'bold', offset: 0, length: 4 },
        { type: 'underline', offset: 5, length: 1 },
        { type: 'strikethrough', offset: 7, length: 1 },
        { type: 'spoiler', offset: 9, length: 2 },
        { type: 'code', offset: 12, length: 3 },
        { type: 'text_link', offset: 16, length: 1, url: 'https://x.io/a)b' },
      ],
    });
    expect(parseMarkdownV2('```ts\nconst a = 1;\n```')).toEqual({ text: 'const a = 1;\n', entities: [{ type: 'pre', offset: 0, length: 13, language: 'ts' }] });
    expect(parseMarkdownV2('>quoted\n>more\nafter')).toEqual({ text: 'quoted\nmore\nafter', entities: [{ type: 'blockquote', offset: 0, length: 11 }] });
  });

  it('MarkdownV2 errors name the character or the entity and the UTF-8 byte offset', () => {
    expect(parseMarkdownV2('a-b')).toEqual({ error: "Character '-' is reserved and must be escaped with the preceding '\\'" });
    expect(parseMarkdownV2('héllo _x')).toEqual({ error: "Can't find end of Italic entity at byte offset 7" });
    expect(parseMarkdownV2('`a')).toEqual({ error: "Can't find end of Code entity at byte offset 0" });
    expect(parseMarkdownV2('[a](http://x')).toEqual({ error: "Can't find end of a URL at byte offset 4" });
    expect(parseMarkdownV2('`inside code - . ! are fine`')).toMatchObject({ text: 'inside code - . ! are fine' });
  });

  it('HTML: tags, entities, pre/code language, UTF-16 offsets', () => {
    expect(parseHtml('😀 <b>bold <i>both</i></b> &lt;&amp;&gt; &copy; <a href="https://e.com/?a=1&amp;b=2">l</a>')).toEqual({
      text: '😀 bold both <&> &copy; l',
      entities: [
        { type: 'bold', offset: 3, length: 9 },
        { type: 'italic', offset: 8, length: 4 },
        { type: 'text_link', offset: 24, length: 1, url: 'https://e.com/?a=1&b=2' },
      ],
    });
    expect(parseHtml('<pre><code class="language-py">x = 1</code></pre>')).toEqual({
      text: 'x = 1',
      entities: [{ type: 'pre', offset: 0, length: 5, language: 'py' }],
    });
    expect(parseHtml('<span class="x">a</span>')).toEqual({ error: 'Tag "span" must have class "tg-spoiler" at byte offset 0' });
    expect(parseHtml('a </b>')).toEqual({ error: 'Unexpected end tag at byte offset 2' });
    expect(parseHtml('<b')).toEqual({ error: 'Unclosed start tag at byte offset 0' });
  });

  it('legacy Markdown, trimming, detected entities and parse_mode handling', () => {
    expect(parseLegacyMarkdown('*a* [b](http://c)')).toEqual({
      text: 'a b',
      entities: [
        { type: 'bold', offset: 0, length: 1 },
        { type: 'text_link', offset: 2, length: 1, url: 'http://c' },
      ],
    });
    expect(parseLegacyMarkdown('x *y')).toEqual({ error: "Can't find end of the entity starting at byte offset 2" });
    expect(formatMessageText('  <b>hi</b>  ', 'HTML', undefined)).toEqual({ text: 'hi', entities: [{ type: 'bold', offset: 0, length: 2 }] });
    expect(formatMessageText('x', 'Markdown3', undefined)).toEqual({ error: 'unsupported parse_mode' });
    expect(formatMessageText('<b>', 'html', undefined)).toEqual({ error: 'can\'t parse entities: Can\'t find end tag corresponding to start tag "b"' });
    expect(detectEntities('/start@my_bot hi @someone see https://a.io/x.')).toEqual([
      { type: 'bot_command', offset: 0, length: 13 },
      { type: 'mention', offset: 17, length: 8 },
      { type: 'url', offset: 30, length: 14 },
    ]);
  });
});
