import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeTelegramFiles, telegramInboundFile } from '../src/files.js';
import { messageSchema } from '../src/update-schema.js';

const TOKEN = '123456:SECRETsecretSECRETsecret';

describe('describeTelegramFiles', () => {
  it('takes the document and the largest photo size, with stand-ins for missing names and types', () => {
    const refs = describeTelegramFiles({
      message_id: 9,
      document: { file_id: 'd1', file_size: 10 },
      photo: [
        { file_id: 'small', file_size: 100 },
        { file_id: 'big', file_size: 900 },
        { file_id: 'mid', file_size: 400 },
      ],
    });
    expect(refs).toEqual([
      { fileId: 'd1', name: 'document-9', mimeType: 'application/octet-stream', kind: 'document', size: 10 },
      { fileId: 'big', name: 'photo-9.jpg', mimeType: 'image/jpeg', kind: 'image', size: 900 },
    ]);
    expect(describeTelegramFiles({ message_id: 1, document: { file_id: 'x', file_name: 'a.png', mime_type: 'image/png' } })[0]).toMatchObject({
      name: 'a.png',
      kind: 'image',
    });
    expect(describeTelegramFiles({ message_id: 1 })).toEqual([]);
  });

  it('is total over hostile messages that pass the update schema (property)', () => {
    const hostileFile = fc.record(
      {
        file_id: fc.oneof(fc.string(), fc.constant('')),
        file_size: fc.oneof(fc.double(), fc.constant(Number.MAX_VALUE), fc.constant(-1), fc.integer()),
        file_name: fc.oneof(fc.string(), fc.constant('../../x'), fc.anything()),
        mime_type: fc.anything(),
      },
      { requiredKeys: ['file_id'] },
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            document: fc.oneof(hostileFile, fc.anything()),
            photo: fc.oneof(fc.array(hostileFile, { maxLength: 5 }), fc.anything()),
            caption: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        (extra) => {
          const parsed = messageSchema.safeParse({ message_id: 5, chat: { id: 1, type: 'private' }, date: 0, ...extra });
          if (!parsed.success) return;
          const refs = describeTelegramFiles(parsed.data);
          expect(refs.length).toBeLessThanOrEqual(2);
          for (const r of refs) {
            expect(typeof r.fileId).toBe('string');
            expect(r.fileId.length).toBeGreaterThan(0);
            expect(r.name.length).toBeGreaterThan(0);
            if (r.size !== undefined) expect(Number.isFinite(r.size) && r.size >= 0).toBe(true);
          }
        },
      ),
    );
  });
});

describe('telegramInboundFile', () => {
  const ref = { fileId: 'f1', name: 'a.txt', mimeType: 'text/plain', kind: 'document' as const };

  it('refuses a file getFile reports over the limit, before downloading', async () => {
    const api = { getFile: async () => ({ file_id: 'f1', file_unique_id: 'u', file_size: 2048, file_path: 'documents/a.txt' }) };
    const f = telegramInboundFile(ref, { api, apiRoot: 'http://127.0.0.1:1', token: TOKEN, maxBytes: 1024 });
    await expect(f.fetch()).rejects.toThrow(/larger than the limit of 1024 bytes/u);
  });

  it('says when Telegram gives no download path', async () => {
    const api = { getFile: async () => ({ file_id: 'f1', file_unique_id: 'u' }) };
    await expect(telegramInboundFile(ref, { api, apiRoot: 'http://127.0.0.1:1', token: TOKEN, maxBytes: 1024 }).fetch()).rejects.toThrow(/no download path/u);
  });

  it('never puts the token in an error, whatever failed', async () => {
    const failing = { getFile: async () => Promise.reject(new Error(`request to https://api.telegram.org/bot${TOKEN}/getFile failed`)) };
    const e1 = await telegramInboundFile(ref, { api: failing, apiRoot: 'http://127.0.0.1:1', token: TOKEN, maxBytes: 1024 })
      .fetch()
      .catch((e: Error) => e);
    const ok = { getFile: async () => ({ file_id: 'f1', file_unique_id: 'u', file_path: 'documents/a.txt' }) };
    const e2 = await telegramInboundFile(ref, { api: ok, apiRoot: 'http://127.0.0.1:1', token: TOKEN, maxBytes: 1024 })
      .fetch()
      .catch((e: Error) => e);
    for (const e of [e1, e2]) {
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).not.toContain(TOKEN);
    }
  });
});
