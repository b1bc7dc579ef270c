import { describe, expect, it } from 'vitest';
import { parseMultipart } from '../src/multipart.js';

const CT = 'multipart/form-data; boundary=----------abc123';

describe('parseMultipart', () => {
  it('reads fields and file parts as grammY writes them (no space after colons, unquoted filename), binary-safe', () => {
    const bytes = Buffer.from([0, 13, 10, 45, 45, 255]);
    const body = Buffer.concat([
      Buffer.from('------------abc123\r\ncontent-disposition:form-data;name="chat_id"\r\n\r\n42\r\n------------abc123\r\n'),
      Buffer.from('content-disposition:form-data;name="document"\r\n\r\nattach://f1\r\n------------abc123\r\n'),
      Buffer.from('content-disposition:form-data;name="f1";filename=my report.pdf\r\ncontent-type:application/octet-stream\r\n\r\n'),
      bytes,
      Buffer.from('\r\n------------abc123--\r\n'),
    ]);
    const parsed = parseMultipart(body, CT);
    if ('error' in parsed) throw new Error(parsed.error);
    expect(parsed.fields).toMatchObject({ chat_id: '42', document: 'attach://f1' });
    const file = parsed.files.get('f1');
    expect(file?.filename).toBe('my report.pdf');
    expect(file?.data.equals(bytes)).toBe(true);
  });

  it('reads quoted names with escapes and refuses broken bodies', () => {
    const ok = Buffer.from('--b\r\nContent-Disposition: form-data; name="f"; filename="a \\"q\\".txt"\r\n\r\nhi\r\n--b--');
    const parsed = parseMultipart(ok, 'multipart/form-data; boundary=b');
    expect('error' in parsed ? parsed.error : parsed.files.get('f')?.filename).toBe('a "q".txt');
    expect(parseMultipart(Buffer.from('x'), 'multipart/form-data')).toEqual({ error: 'multipart body without a boundary' });
    expect('error' in parseMultipart(Buffer.from('--b\r\nno header end'), 'multipart/form-data; boundary=b')).toBe(true);
    expect('error' in parseMultipart(Buffer.from('--b\r\ncontent-disposition: form-data\r\n\r\nx\r\n--b--'), 'multipart/form-data; boundary=b')).toBe(true);
  });
});
