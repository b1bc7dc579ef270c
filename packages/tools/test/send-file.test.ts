import { symlinkSync } from 'node:fs';
import path from 'node:path';
import type { OutboundFile } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { createSendFileTool, mimeTypeOf } from '../src/index.js';
import { sandbox, SECRET } from './fixtures.js';

function withSender(ctx: ReturnType<ReturnType<typeof sandbox>['ctx']>) {
  const sent: OutboundFile[] = [];
  const sendFile = async (f: OutboundFile): Promise<string> => {
    sent.push(f);
    return 'delivered';
  };
  return { sent, ctx: { ...ctx, sendFile } };
}

describe('send_file', () => {
  it('hands a workspace file to the channel with its name, type, bytes and caption', async () => {
    const box = sandbox();
    box.put('out/report.pdf', Buffer.from('%PDF-1.7 x'));
    const { sent, ctx } = withSender(box.ctx());
    const tool = createSendFileTool();
    const r = await tool.call({ path: 'out/report.pdf', caption: 'here' }, ctx);
    expect(r.content).toBe('Sent out/report.pdf (10 bytes): delivered');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ name: 'report.pdf', mimeType: 'application/pdf', caption: 'here' });
    expect(Buffer.from(sent[0]!.data).toString()).toBe('%PDF-1.7 x');
  });

  it('refuses paths outside the workspace and links leading out, before anything is sent', async () => {
    const box = sandbox();
    symlinkSync(box.secretFile, path.join(box.ws, 'link.txt'));
    const { sent, ctx } = withSender(box.ctx());
    const tool = createSendFileTool();
    for (const p of ['../outside/secret.txt', box.secretFile, 'link.txt']) {
      expect(await tool.validateInput!({ path: p }, ctx)).toMatchObject({ ok: false });
      await expect(tool.call({ path: p }, ctx)).rejects.toThrow(/refused/u);
    }
    expect(sent).toHaveLength(0);
    expect(JSON.stringify(sent)).not.toContain(SECRET);
  });

  it('refuses directories, missing files, files over maxBytes and chats that cannot take files', async () => {
    const box = sandbox();
    box.put('dir/a.txt', 'a');
    box.put('big.bin', Buffer.alloc(2048));
    const { sent, ctx } = withSender(box.ctx());
    const tool = createSendFileTool({ maxBytes: 1024 });
    await expect(tool.call({ path: 'dir' }, ctx)).rejects.toThrow(/not a file/u);
    await expect(tool.call({ path: 'nope.txt' }, ctx)).rejects.toThrow(/does not exist/u);
    await expect(tool.call({ path: 'big.bin' }, ctx)).rejects.toThrow(/at most 1 KiB|at most 1\.0 KiB|at most 1024/u);
    await expect(tool.call({ path: 'dir/a.txt' }, box.ctx())).rejects.toThrow(/cannot receive files/u);
    expect(sent).toHaveLength(0);
  });

  it('types files by extension', () => {
    expect(mimeTypeOf('a.PNG')).toBe('image/png');
    expect(mimeTypeOf('notes')).toBe('application/octet-stream');
  });
});
