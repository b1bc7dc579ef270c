/** One file part of a `multipart/form-data` body. */
export interface MultipartFile {
  /** The part's `name` (grammY: the random id of an `attach://<id>` reference). */
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A parsed `multipart/form-data` body: text fields by name, file parts by field name. */
export interface MultipartBody {
  fields: Record<string, string>;
  files: Map<string, MultipartFile>;
}

/** The `boundary` parameter of a `multipart/form-data` content type, if any. */
export function multipartBoundary(contentType: string): string | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/iu.exec(contentType);
  return m?.[1] ?? m?.[2];
}

// A header parameter (`name="x"`, `filename=report.pdf` as grammY writes it unquoted).
function param(header: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|;)\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\r\\n]*))`, 'iu').exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/gu, '$1') : (m[2] ?? '').trim();
}

/**
 * Parses a `multipart/form-data` body as servers do (RFC 7578): parts between `--boundary`
 * lines, each with headers (names case-insensitive, optional space after the colon), a blank line
 * and the content. Returns an error text for a body that does not follow the format.
 */
export function parseMultipart(body: Buffer, contentType: string): MultipartBody | { error: string } {
  const boundary = multipartBoundary(contentType);
  if (!boundary) return { error: 'multipart body without a boundary' };
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  const files = new Map<string, MultipartFile>();
  let pos = body.indexOf(delimiter);
  if (pos === -1) return { error: 'multipart body without its boundary' };
  for (;;) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === '--') return { fields, files };
    if (body.subarray(pos, pos + 2).toString() !== '\r\n') return { error: 'malformed multipart boundary line' };
    pos += 2;
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd === -1) return { error: 'multipart part without a header end' };
    const headers = new Map<string, string>();
    for (const line of body.subarray(pos, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next === -1) return { error: 'multipart part without a closing boundary' };
    const content = body.subarray(headerEnd + 4, next);
    const disposition = headers.get('content-disposition') ?? '';
    const name = param(disposition, 'name');
    if (name === undefined) return { error: 'multipart part without a name' };
    const filename = param(disposition, 'filename');
    if (filename !== undefined) {
      files.set(name, { field: name, filename, contentType: headers.get('content-type') ?? 'application/octet-stream', data: Buffer.from(content) });
    } else {
      fields[name] = content.toString('utf8');
    }
    pos = next + 2;
  }
}
