/** Characters per message: Slack truncates very long messages and refuses ~40k; 3,900 keeps a margin. */
export const SLACK_CHUNK_LIMIT = 3900;

const FENCE = '```';

/** Escapes the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Converts inline Markdown (outside code) to mrkdwn; `s` is already escaped. */
function inline(s: string): string {
  return (
    s
      // [label](url) → <url|label>; only web and mail links, so no `<!channel>`-like control text can be built.
      .replace(/\[([^\]\n|]+)\]\(((?:https?:\/\/|mailto:)[^)\s|]+)\)/g, '<$2|$1>')
      // Bold first into a placeholder, so the italics rule below cannot see it.
      .replace(/\*\*([^*\n]+)\*\*/g, '\u0001$1\u0001')
      .replace(/__([^_\n]+)__/g, '\u0001$1\u0001')
      .replace(/(^|[^*\w])\*([^*\n]+)\*(?![*\w])/g, '$1_$2_')
      .replace(/~~([^~\n]+)~~/g, '~$1~')
      .replace(/\u0001/g, '*')
  );
}

function prose(s: string): string {
  const parts = s.split(/(`[^`\n]+`)/);
  return parts
    .map((p, i) => {
      if (i % 2 === 1) return escapeMrkdwn(p);
      return escapeMrkdwn(p)
        .split('\n')
        .map((line) => {
          const h = /^#{1,6}\s+(.+)$/.exec(line);
          if (h) return `*${inline(h[1]!).replace(/\*/g, '')}*`;
          const li = /^(\s*)[-*+]\s+(.*)$/.exec(line);
          if (li) return `${li[1]}• ${inline(li[2]!)}`;
          return inline(line);
        })
        .join('\n');
    })
    .join('');
}

/**
 * Model Markdown → Slack mrkdwn that cannot trigger mentions or links by accident: `&`, `<`, `>`
 * are escaped everywhere (code included, as Slack requires), and the common Markdown forms
 * (bold, italics, strike, headings, bullets, links) are mapped to their mrkdwn spelling.
 */
export function toMrkdwn(markdown: string): string {
  const segments = markdown.split(FENCE);
  return segments.map((seg, i) => (i % 2 === 1 ? escapeMrkdwn(seg) : prose(seg))).join(FENCE);
}

/** Where to cut `s` at or before `max` without splitting an entity: a paragraph, a line, a space or anywhere. */
function cutPoint(s: string, max: number): number {
  const window = s.slice(0, max);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at > max / 2) return at + sep.length;
  }
  const amp = window.lastIndexOf('&');
  if (amp >= 0 && amp > max - 5 && !window.slice(amp).includes(';')) return amp;
  return max;
}

/**
 * Splits mrkdwn into messages of at most `limit` characters, preferring paragraph and line breaks;
 * a code block cut in two is closed at the end of one part and reopened at the start of the next.
 */
export function chunkMrkdwn(text: string, limit = SLACK_CHUNK_LIMIT): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const at = cutPoint(rest, limit - FENCE.length - 1);
    let part = rest.slice(0, at);
    rest = rest.slice(at);
    if (part.split(FENCE).length % 2 === 0) {
      part = `${part.replace(/\n$/, '')}\n${FENCE}`;
      rest = `${FENCE}\n${rest}`;
    }
    out.push(part.trimEnd());
  }
  if (rest.trim() !== '' || out.length === 0) out.push(rest.trimEnd());
  return out.filter((p, i) => p !== '' || i === 0);
}

/** A draft's text: the streamed answer so far as mrkdwn, cut to one message with a trailing ellipsis. */
export function draftMrkdwn(raw: string): string {
  const text = toMrkdwn(raw);
  if (text.length <= SLACK_CHUNK_LIMIT) return text;
  return `${chunkMrkdwn(text, SLACK_CHUNK_LIMIT - 2)[0]} …`;
}
