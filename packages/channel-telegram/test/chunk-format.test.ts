import { describe, expect, it } from 'vitest';
import { parseHtml } from '@switchboard/testkit';
import { chunkText, draftPreview } from '../src/chunk.js';
import { toTelegramHtml } from '../src/format.js';

describe('chunkText', () => {
  it('keeps short text whole and never returns empty chunks', () => {
    expect(chunkText('hello')).toEqual(['hello']);
    expect(chunkText('')).toEqual([]);
    expect(chunkText('   \n')).toEqual([]);
  });

  it('prefers paragraph, then line, then word boundaries', () => {
    const para = `${'a'.repeat(60)}\n\n${'b'.repeat(30)}`;
    expect(chunkText(para, 80)).toEqual(['a'.repeat(60), 'b'.repeat(30)]);
    const lines = `${'a'.repeat(50)}\n${'b'.repeat(50)}`;
    expect(chunkText(lines, 80)).toEqual(['a'.repeat(50), 'b'.repeat(50)]);
    const words = `${'a'.repeat(50)} ${'b'.repeat(50)}`;
    expect(chunkText(words, 80)).toEqual(['a'.repeat(50), 'b'.repeat(50)]);
  });

  it('cuts hard without a boundary, never between the halves of a surrogate pair', () => {
    const emoji = '😀'.repeat(60);
    const chunks = chunkText(emoji, 81);
    expect(chunks.join('')).toBe(emoji);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(81);
      expect(/^(?:[\uD800-\uDBFF][\uDC00-\uDFFF])+$/.test(c)).toBe(true);
    }
  });

  it('stays within 4096 UTF-16 code units and closes and reopens a split code block', () => {
    const code = Array.from({ length: 400 }, (_, i) => `const x${i} = ${i};`).join('\n');
    const text = `Intro\n\n\`\`\`ts\n${code}\n\`\`\`\n\nOutro`;
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(4096);
      expect((c.match(/```/g) ?? []).length % 2).toBe(0);
      expect('error' in parseHtml(toTelegramHtml(c))).toBe(false);
    }
  });

  it('previews a draft within the limit', () => {
    expect(draftPreview('x'.repeat(5000))).toHaveLength(4096);
    expect(draftPreview('  short  ')).toBe('short');
  });
});

describe('toTelegramHtml', () => {
  const visible = (md: string) => {
    const r = parseHtml(toTelegramHtml(md));
    if ('error' in r) throw new Error(r.error);
    return r;
  };

  it('escapes markup characters so any text parses', () => {
    expect(visible('a < b && c > d').text).toBe('a < b && c > d');
    expect(visible('<b>not bold</b> & <script>').text).toBe('<b>not bold</b> & <script>');
  });

  it('renders bold, inline code and code blocks as entities', () => {
    const r = visible('Some **bold** and `x < 1` here\n```js\nif (a < b) {}\n```\nafter');
    expect(r.text).toBe('Some bold and x < 1 here\nif (a < b) {}\nafter');
    expect(r.entities.map((e) => e.type)).toEqual(['bold', 'code', 'pre']);
  });

  it('leaves unbalanced markers literal', () => {
    expect(visible('a ** b ` c').text).toBe('a ** b ` c');
    expect(visible('```\nnever closed').text).toBe('```\nnever closed');
    expect(visible('snake_case_name and _italic_').text).toBe('snake_case_name and italic');
  });
});
