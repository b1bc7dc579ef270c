import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '@switchboard/testkit';
import { bearer, chat, personWorkspace, toolResultFor, useGateway } from './helpers.js';

// Issue 15, files out of chat on the WebSocket channel: a `file` frame and `GET /files/{id}`.
const env = useGateway({ config: { tools: { sendFile: { enabled: true } } }, client: true });

describe('send_file on the WebSocket channel', () => {
  it('sends a file frame whose download needs the person’s own client token; ids are unguessable', async () => {
    const { fake, ws, gw } = env;
    writeFileSync(join(personWorkspace(gw), 'chart.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    fake.enqueue({ toolUses: [{ name: 'send_file', input: { path: 'chart.png', caption: 'the chart' }, id: 'toolu_ws_send' }] }, { text: 'There it is.' });
    const turn = await chat(ws, 'f1', 'send me the chart');
    expect(turn.end).toMatchObject({ type: 'final', text: 'There it is.' });
    const frame = ws.frames.find((f) => f.type === 'file');
    expect(frame).toMatchObject({ name: 'chart.png', mimeType: 'image/png', size: 7, caption: 'the chart' });
    expect(String(frame!.url)).toBe(`/files/${frame!.fileId}`);
    expect(String(frame!.fileId)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Date.parse(String(frame!.expiresAt))).toBeGreaterThan(Date.now());
    expect(toolResultFor(fake, 'toolu_ws_send').is_error).toBeFalsy();

    const url = `${gw.url}${frame!.url}`;
    const mine = await fetch(url, { headers: bearer(gw.credentials().clientToken) });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('image/png');
    expect(mine.headers.get('content-disposition')).toContain('attachment');
    expect(Buffer.from(await mine.arrayBuffer())).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));

    // No token, the operator's token, and another person's client token get nothing.
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: bearer(gw.credentials().operatorToken) })).status).toBe(401);
    const other = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'mallory', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
    };
    expect((await fetch(url, { headers: bearer(other.secret) })).status).toBe(404);
    expect((await fetch(`${gw.url}/files/${'A'.repeat(32)}`, { headers: bearer(gw.credentials().clientToken) })).status).toBe(404);
  });

  it('refuses a path outside the workspace and a missing file', async () => {
    const { fake, ws } = env;
    fake.enqueue(
      {
        toolUses: [
          { name: 'send_file', input: { path: '../../../config.json5' }, id: 'toolu_ws_escape' },
          { name: 'send_file', input: { path: 'nope.txt' }, id: 'toolu_ws_missing' },
        ],
      },
      { text: 'Could not.' },
    );
    await chat(ws, 'f2', 'send me the config');
    expect(toolResultFor(fake, 'toolu_ws_escape')).toMatchObject({ is_error: true, content: expect.stringContaining('refused') });
    expect(toolResultFor(fake, 'toolu_ws_missing')).toMatchObject({ is_error: true, content: expect.stringContaining('does not exist') });
    expect(ws.frames.filter((f) => f.type === 'file')).toHaveLength(1);
  });
});
