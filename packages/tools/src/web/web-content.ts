// The DOM libraries cost ~300 ms to load: they are imported on the first HTML page, not at start-up.
type DomLibs = {
  Readability: typeof import('@mozilla/readability').Readability;
  parseHTML: typeof import('linkedom').parseHTML;
  Turndown: typeof import('turndown');
};
let domLibs: Promise<DomLibs> | undefined;
function loadDomLibs(): Promise<DomLibs> {
  domLibs ??= Promise.all([import('@mozilla/readability'), import('linkedom'), import('turndown')]).then(([r, l, t]) => ({
    Readability: r.Readability,
    parseHTML: l.parseHTML,
    Turndown: t.default,
  }));
  return domLibs;
}

/** A fetched body as the model reads it. */
export type ReadableContent = { ok: true; kind: 'html' | 'json' | 'text'; title?: string; text: string } | { ok: false; reason: string };

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** The media type of a `Content-Type` header, lower case (`''` when absent). */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** A media type fit to show the model outside the fence: a strict `type/subtype`, else a placeholder (a header is the server's text). */
export function shownMediaType(contentType: string): string {
  const type = mediaTypeOf(contentType);
  if (type === '') return 'none';
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/u.test(type) ? type : 'an unusual type';
}

/** Decodes with the header's charset (UTF-8 when it names none or one TextDecoder does not know). */
export function decodeBody(body: Buffer, contentType: string): string {
  const m = /charset\s*=\s*"?([^";\s]+)/iu.exec(contentType);
  try {
    return new TextDecoder(m?.[1] ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/**
 * A body the model can read: HTML → the article (Mozilla Readability over a linkedom DOM) as
 * Markdown (turndown), falling back to the whole `<body>` when Readability finds no article;
 * JSON and `text/*` as they are; anything else refused with the type it had.
 */
export async function readableContent(body: Buffer, contentType: string, url: string): Promise<ReadableContent> {
  const type = mediaTypeOf(contentType);
  if (HTML_TYPES.has(type)) return { ok: true, kind: 'html', ...htmlToMarkdown(decodeBody(body, contentType), await loadDomLibs()) };
  if (type === 'application/json' || type.endsWith('+json')) return { ok: true, kind: 'json', text: decodeBody(body, contentType) };
  if (type.startsWith('text/')) return { ok: true, kind: 'text', text: decodeBody(body, contentType) };
  return {
    ok: false,
    reason: `web_fetch reads HTML, JSON and text only; ${url} is ${type === '' ? 'of no declared type' : shownMediaType(contentType)}`,
  };
}

function htmlToMarkdown(html: string, { Readability, parseHTML, Turndown }: DomLibs): { title?: string; text: string } {
  const { document } = parseHTML(html);
  for (const el of document.querySelectorAll('script, style, noscript, template, iframe, object, embed')) el.remove();
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  let articleHtml: string | undefined;
  let title = fallbackTitle;
  try {
    // Readability changes the document it reads: give it a copy, keep the original for the fallback.
    const article = new Readability(parseHTML(document.toString()).document as unknown as ConstructorParameters<typeof Readability>[0], {
      charThreshold: 100,
    }).parse();
    if (article?.content && (article.textContent ?? '').trim() !== '') {
      articleHtml = article.content;
      title = article.title?.trim() || fallbackTitle;
    }
  } catch {
    // A page Readability cannot read falls back to its whole body.
  }
  const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  const bodyHtml = document.body?.innerHTML ?? '';
  const source = articleHtml ?? (bodyHtml.trim() !== '' ? bodyHtml : document.toString());
  const text = turndown
    .turndown(source)
    .replace(/\n{3,}/gu, '\n\n')
    .trim();
  return title === '' ? { text } : { title, text };
}
