/** Escapes text for Telegram's HTML parse mode (only `&`, `<`, `>` need it). */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function inline(s: string): string {
  // Code spans first (their content is literal), then bold and italics outside them.
  return s
    .split(/(`[^`\n]+`)/g)
    .map((part, i) => {
      if (i % 2 === 1) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      return escapeHtml(part)
        .replace(/\*\*([^*\n]+)\*\*/g, '<b>$1</b>')
        .replace(/(^|[\s(])_([^_\n]+)_(?=[\s.,;:!?)]|$)/g, '$1<i>$2</i>');
    })
    .join('');
}

/**
 * Renders a model's Markdown-ish answer as Telegram HTML: fenced code blocks, inline code,
 * **bold** and _italic_; everything else is escaped text. Unbalanced markers stay literal, so
 * the output always parses; callers still fall back to plain text on a parse error.
 */
export function toTelegramHtml(text: string): string {
  const parts = text.split(/^```/m);
  if (parts.length % 2 === 0) return inline(text);
  return parts
    .map((part, i) => {
      if (i % 2 === 0) return inline(part);
      const nl = part.indexOf('\n');
      const lang = nl > 0 ? part.slice(0, nl).trim() : '';
      const code = (nl >= 0 ? part.slice(nl + 1) : part).replace(/\n$/, '');
      const cls = /^[A-Za-z0-9_+-]{1,32}$/.test(lang) ? ` class="language-${lang}"` : '';
      return `<pre><code${cls}>${escapeHtml(code)}</code></pre>`;
    })
    .join('');
}
