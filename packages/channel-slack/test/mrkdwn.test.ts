import { describe, expect, it } from 'vitest';
import { chunkMrkdwn, draftMrkdwn, escapeMrkdwn, SLACK_CHUNK_LIMIT, toMrkdwn } from '../src/mrkdwn.js';

describe('mrkdwn formatting', () => {
  it('escapes &, < and > everywhere, code included', () => {
    expect(escapeMrkdwn('a & <b> c')).toBe('a &amp; &lt;b&gt; c');
    expect(toMrkdwn('<!channel> and `<@U1>`\n```\nif (a < b && c) {}\n```')).toBe(
      '&lt;!channel&gt; and `&lt;@U1&gt;`\n```\nif (a &lt; b &amp;&amp; c) {}\n```',
    );
  });

  it('maps bold, italics, strike, headings, bullets and web links; leaves code alone', () => {
    expect(toMrkdwn('**bold** and *it* and ~~gone~~')).toBe('*bold* and _it_ and ~gone~');
    expect(toMrkdwn('# Title\n- one\n* two')).toBe('*Title*\n• one\n• two');
    expect(toMrkdwn('see [docs](https://example.com/a?b=1&c=2)')).toBe('see <https://example.com/a?b=1&amp;c=2|docs>');
    expect(toMrkdwn('[x](javascript:alert(1))')).toBe('[x](javascript:alert(1))');
    expect(toMrkdwn('`**not bold**`')).toBe('`**not bold**`');
  });
});

describe('chunking', () => {
  it('keeps short text whole and splits long text under the limit at paragraph breaks', () => {
    expect(chunkMrkdwn('hello')).toEqual(['hello']);
    const paras = Array.from({ length: 10 }, (_, i) => `P${i} ${'x'.repeat(900)}`).join('\n\n');
    const parts = chunkMrkdwn(paras);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
    expect(parts.join('\n\n')).toBe(paras);
  });

  it('never cuts an entity in half', () => {
    const text = '&amp;'.repeat(2000);
    for (const p of chunkMrkdwn(text)) expect(p).toMatch(/^(&amp;)+$/);
  });

  it('closes and reopens a code block cut in two', () => {
    const code = `\`\`\`\n${Array.from({ length: 400 }, (_, i) => `line ${i} of code`).join('\n')}\n\`\`\``;
    const parts = chunkMrkdwn(code);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.split('```').length % 2).toBe(1);
      expect(p.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
    }
  });

  it('a draft longer than one message is cut with an ellipsis', () => {
    const d = draftMrkdwn('word '.repeat(2000));
    expect(d.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
    expect(d.endsWith(' …')).toBe(true);
  });
});
