import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  attachInboundFiles,
  FileShelf,
  imageDigest,
  type InboundFile,
  type InboundMessage,
  Router,
  sanitizeFileName,
  sniffImageType,
  userContent,
  writeNew,
} from '../src/index.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'swb-inbound-files-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const file = (name: string, body: string | Error, mimeType = 'text/plain'): InboundFile => ({
  name,
  mimeType,
  kind: 'document',
  fetch: () => (body instanceof Error ? Promise.reject(body) : Promise.resolve(Buffer.from(body))),
});

function message(files: InboundFile[], extra: Partial<InboundMessage> = {}): InboundMessage {
  return {
    dedupeKey: '1',
    channel: 'telegram',
    account: 'main',
    conversation: { channel: 'telegram', account: 'main', id: '42', kind: 'dm' },
    sender: { identity: 'telegram:42', isBot: false },
    kind: 'dm',
    mentioned: true,
    text: 'see attached',
    platformId: '7',
    receivedAt: new Date(0),
    principalId: 'p1',
    files,
    ...extra,
  };
}

const workspaces = (dir: string) => ({
  ensure: async () => {
    mkdirSync(dir, { recursive: true });
    return dir;
  },
});

describe('sanitizeFileName', () => {
  it('keeps a plain name and strips directories and leading dots', () => {
    expect(sanitizeFileName('report.pdf')).toBe('report.pdf');
    expect(sanitizeFileName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('C:\\Users\\x\\evil.exe')).toBe('evil.exe');
    expect(sanitizeFileName('.bashrc')).toBe('bashrc');
    expect(sanitizeFileName('..')).toBe('file');
    expect(sanitizeFileName('', 'image/png')).toBe('file.png');
    expect(sanitizeFileName(undefined)).toBe('file');
    expect(sanitizeFileName('a\u0000b\nc.txt')).toBe('a_b_c.txt');
  });

  it('is total and always gives one safe, short path segment (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 400 }),
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.array(fc.constantFrom('.', '..', '/', '\\', '\0', '\n', ' ', 'a', '\u202e', 'é', '.pdf'), { maxLength: 60 }).map((parts) => parts.join('')),
          fc.anything(),
        ),
        fc.anything(),
        (raw, mime) => {
          const name = sanitizeFileName(raw, mime);
          expect(name.length).toBeGreaterThan(0);
          expect([...name].length).toBeLessThanOrEqual(100);
          expect(name).not.toMatch(/[/\\\0\n\r]/u);
          expect(name.startsWith('.')).toBe(false);
          expect(name).not.toBe('..');
        },
      ),
    );
  });
});

describe('writeNew', () => {
  it('never overwrites: a taken name gets -1, -2, …', async () => {
    writeFileSync(join(root, 'a.txt'), 'first');
    expect(await writeNew(root, 'a.txt', Buffer.from('second'))).toBe('a-1.txt');
    expect(await writeNew(root, 'a.txt', Buffer.from('third'))).toBe('a-2.txt');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('first');
  });

  it('does not write through a dangling symlink planted under the name', async () => {
    symlinkSync(join(root, 'outside-target'), join(root, 'b.txt'));
    expect(await writeNew(root, 'b.txt', Buffer.from('x'))).toBe('b-1.txt');
    expect(readdirSync(root)).not.toContain('outside-target');
  });
});

describe('attachInboundFiles', () => {
  it('saves every file in inbox/ and tells the model each path, type and size', async () => {
    const ws = join(root, 'ws');
    const out = await attachInboundFiles(message([file('notes.txt', 'hello'), file('notes.txt', 'again')]), 'default', workspaces(ws));
    expect(out.files).toBeUndefined();
    expect(out.text).toContain('see attached');
    expect(out.text).toContain('inbox/notes.txt (text/plain, 5 bytes)');
    expect(out.text).toContain('inbox/notes-1.txt (text/plain, 5 bytes)');
    expect(readFileSync(join(ws, 'inbox', 'notes-1.txt'), 'utf8')).toBe('again');
  });

  it('says which file could not be saved and why, and keeps the others', async () => {
    const ws = join(root, 'ws');
    const out = await attachInboundFiles(
      message([file('bad.bin', new Error('the download failed (HTTP 404)')), file('ok.txt', 'ok')]),
      'default',
      workspaces(ws),
    );
    expect(out.text).toContain('"bad.bin" that could not be saved: the download failed (HTTP 404)');
    expect(out.text).toContain('inbox/ok.txt');
  });

  it('saves nothing for a sender without a principal, and says so', async () => {
    const ws = join(root, 'ws');
    const msg = message([file('x.txt', 'x')], { principalId: undefined, kind: 'room' });
    delete msg.principalId;
    const out = await attachInboundFiles(msg, 'default', workspaces(ws));
    expect(out.text).toContain('could not be saved: the gateway does not know this sender');
    expect(() => readdirSync(join(ws, 'inbox'))).toThrow();
  });

  it('refuses an inbox/ that is a symlink leading out of the workspace', async () => {
    const ws = join(root, 'ws');
    const outside = join(root, 'outside');
    mkdirSync(ws);
    mkdirSync(outside);
    symlinkSync(outside, join(ws, 'inbox'));
    const out = await attachInboundFiles(message([file('x.txt', 'x')]), 'default', workspaces(ws));
    expect(out.text).toContain('could not be saved');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('describes a file whose fetch was lost (held before admission) instead of dropping it', async () => {
    const ws = join(root, 'ws');
    const held = JSON.parse(JSON.stringify(message([file('late.pdf', 'x', 'application/pdf')]))) as InboundMessage;
    const out = await attachInboundFiles(held, 'default', workspaces(ws));
    expect(out.text).toContain('"late.pdf" that could not be saved');
  });
});

describe('FileShelf', () => {
  it('gives a file only to its owner, until it expires; ids are 32 base64url characters', () => {
    let now = new Date(1_000_000);
    const shelf = new FileShelf({ ttlMs: 60_000, maxBytes: 100, now: () => now });
    const t = shelf.put({ principalId: 'alice', name: 'a.txt', mimeType: 'text/plain', data: Buffer.from('hi') });
    expect(t.id).toMatch(/^[A-Za-z0-9_-]{32}$/u);
    expect(t.url).toBe(`/files/${t.id}`);
    expect(shelf.get(t.id, 'bob')).toBeNull();
    expect(shelf.get(t.id, 'alice')?.name).toBe('a.txt');
    now = new Date(1_000_000 + 60_000);
    expect(shelf.get(t.id, 'alice')).toBeNull();
    expect(shelf.size).toBe(0);
  });

  it('drops the oldest files to stay under maxBytes and refuses a file larger than all of it', () => {
    const shelf = new FileShelf({ ttlMs: 60_000, maxBytes: 10 });
    const a = shelf.put({ principalId: 'p', name: 'a', mimeType: 'x', data: Buffer.alloc(6) });
    const b = shelf.put({ principalId: 'p', name: 'b', mimeType: 'x', data: Buffer.alloc(6) });
    expect(shelf.get(a.id, 'p')).toBeNull();
    expect(shelf.get(b.id, 'p')).not.toBeNull();
    expect(shelf.size).toBe(6);
    expect(() => shelf.put({ principalId: 'p', name: 'c', mimeType: 'x', data: Buffer.alloc(11) })).toThrow(/larger/u);
  });
});

describe('Router.admit with files', () => {
  it('saves the files in the sender’s workspace before queueing, and queues the message without them', async () => {
    const ws = join(root, 'ws');
    const queued: InboundMessage[] = [];
    const router = new Router({
      defaultAgent: 'helper',
      inboxMaxBytes: 1 << 20,
      storage: { turns: { seen: async () => null } } as never,
      engine: {
        accept: async (message) => {
          queued.push(message);
          return { duplicate: false, inboxId: 'i', turnId: 't', sessionId: 's' };
        },
      },
      gate: () => Promise.reject(new Error('not used')),
      accepting: () => true,
      workspaces: workspaces(ws),
    });
    await router.admit(message([file('plan.md', '# plan')]));
    expect(queued).toHaveLength(1);
    expect(queued[0]!.files).toBeUndefined();
    expect(queued[0]!.text).toContain('inbox/plan.md');
    expect(readFileSync(join(ws, 'inbox', 'plan.md'), 'utf8')).toBe('# plan');
    let fetched = false;
    const stranger = message([
      {
        ...file('x', 'x'),
        fetch: async () => {
          fetched = true;
          return Buffer.from('x');
        },
      },
    ]);
    delete stranger.principalId;
    expect(() => router.admit(stranger)).toThrow(expect.objectContaining({ code: 'SWB_E_UNKNOWN_SENDER' }));
    expect(fetched).toBe(false);
  });
});

describe('Router.admit with files of a redelivered message', () => {
  it('answers the duplicate without downloading its files again', async () => {
    let fetched = 0;
    let accepted = 0;
    const duplicate = { duplicate: true, inboxId: 'i', turnId: 't', sessionId: 's' };
    const router = new Router({
      defaultAgent: 'helper',
      inboxMaxBytes: 1 << 20,
      storage: { turns: { seen: async () => duplicate } } as never,
      engine: {
        accept: async () => {
          accepted++;
          return duplicate;
        },
      },
      gate: () => Promise.reject(new Error('not used')),
      accepting: () => true,
      workspaces: workspaces(join(root, 'ws-dup')),
    });
    const again = message([
      {
        ...file('report.pdf', 'x', 'application/pdf'),
        fetch: async () => {
          fetched++;
          return Buffer.from('x');
        },
      },
    ]);
    expect(await router.admit(again)).toEqual(duplicate);
    expect(fetched).toBe(0);
    expect(accepted).toBe(0);
  });
});

describe('image blocks', () => {
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2]);

  it('sniffs JPEG, PNG, GIF and WebP by their bytes, nothing else', () => {
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe1]))).toBe('image/jpeg');
    expect(sniffImageType(PNG)).toBe('image/png');
    expect(sniffImageType(Buffer.from('GIF89a...'))).toBe('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeUndefined();
    expect(sniffImageType(Buffer.alloc(0))).toBeUndefined();
  });

  it('a saved image is recorded for the model only when its bytes are an image', async () => {
    const ws = join(root, 'ws');
    const out = await attachInboundFiles(
      message([{ ...file('pic.png', ''), kind: 'image', mimeType: 'image/png', fetch: async () => PNG }, file('fake.png', 'not an image', 'image/png')]),
      'default',
      workspaces(ws),
    );
    expect(out.images).toEqual([{ path: join(ws, 'inbox', 'pic.png'), mediaType: 'image/png', sha256: imageDigest(PNG) }]);
  });

  it('userContent adds readable images after the text when image blocks are on, and never throws', async () => {
    const ws = join(root, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.png'), PNG);
    writeFileSync(join(ws, 'b.png'), 'changed since');
    // Another image under the saved name (a swapped inbox/ link, a sandboxed command): not the bytes the person sent.
    writeFileSync(join(ws, 'c.png'), Buffer.concat([PNG, Buffer.from('another image')]));
    const sha256 = imageDigest(PNG);
    const msg = message([], {
      images: [
        { path: join(ws, 'a.png'), mediaType: 'image/png', sha256 },
        { path: join(ws, 'b.png'), mediaType: 'image/png', sha256 },
        { path: join(ws, 'c.png'), mediaType: 'image/png', sha256 },
        { path: join(ws, 'a.png'), mediaType: 'image/png' },
        { path: join(ws, 'gone.png'), mediaType: 'image/png', sha256 },
      ],
    });
    expect(await userContent(msg, false)).toEqual([{ type: 'text', text: 'see attached' }]);
    expect(await userContent(msg, true)).toEqual([
      { type: 'text', text: 'see attached' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
    ]);
    expect(await userContent({ ...msg, images: 'hostile' as never }, true)).toHaveLength(1);
  });
});
