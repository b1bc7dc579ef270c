import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findInWorkspaces, toolResultFor } from './helpers.js';
import { ALICE, isFinal, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// Acceptance 7 (issue 15): files in and out of a Telegram chat through the real gateway.
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], maxInboundMediaBytes: 64 * 1024 },
  { tools: { sendFile: { enabled: true } } },
);

const lastUserText = (): string => JSON.stringify(env.model.requests.at(-1)!.body.messages.at(-1));

describe('files through Telegram', () => {
  it('a document lands in the person’s inbox/ (getFile + download) and the model is told its path and type; a second one never overwrites', async () => {
    const { tg, model } = env;
    const since = tg.calls.length;
    model.enqueue({ text: 'Got your report.' }, { text: 'Got the second one.' });
    tg.sendUserMessage(TOKEN, {
      chat: ALICE.dm,
      from: ALICE.user,
      caption: 'here is the report',
      document: { file_name: 'report.txt', mime_type: 'text/plain', content: 'quarterly numbers: 42\n' },
    });
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000, since);
    const saved = findInWorkspaces(env.gw, 'inbox/report.txt');
    expect(saved).toBeDefined();
    expect(readFileSync(saved!, 'utf8')).toBe('quarterly numbers: 42\n');
    expect(tg.calls.some((c) => c.seq > since && c.method === 'getFile')).toBe(true);
    const told = lastUserText();
    expect(told).toContain('here is the report');
    expect(told).toContain('inbox/report.txt');
    expect(told).toContain('text/plain');

    // The same name again, and a hostile name: both stay in inbox/, nothing is overwritten.
    const again = tg.calls.length;
    tg.sendUserMessage(TOKEN, {
      chat: ALICE.dm,
      from: ALICE.user,
      document: { file_name: '../../report.txt', mime_type: 'text/plain', content: 'second version\n' },
    });
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000, again);
    expect(readFileSync(saved!, 'utf8')).toBe('quarterly numbers: 42\n');
    const second = join(dirname(saved!), 'report-1.txt');
    expect(readFileSync(second, 'utf8')).toBe('second version\n');
    expect(lastUserText()).toContain('inbox/report-1.txt');
  });

  it('a photo lands in inbox/ and also reaches the model as an image content block', async () => {
    const { tg, model } = env;
    const since = tg.calls.length;
    // A real JPEG header (the gateway sniffs the bytes, not the declared type).
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
    model.enqueue({ text: 'Nice picture.' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, caption: 'what is this?', photo: [{ content: jpeg, width: 90, height: 90 }] });
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000, since);
    const last = env.model.requests.at(-1)!.body.messages.at(-1) as {
      content: Array<{ type: string; text?: string; source?: { media_type: string; data: string } }>;
    };
    const image = last.content.find((b) => b.type === 'image');
    expect(image?.source).toMatchObject({ type: 'base64', media_type: 'image/jpeg', data: jpeg.toString('base64') });
    const text = last.content.map((b) => b.text ?? '').join('\n');
    expect(text).toContain('what is this?');
    expect(text).toMatch(/inbox\/photo-\d+\.jpg \(image\/jpeg, 14 bytes\)/u);
    expect(readFileSync(findInWorkspaces(env.gw, text.match(/inbox\/photo-\d+\.jpg/u)![0])!).equals(jpeg)).toBe(true);
  });

  it('a file over maxInboundMediaBytes gets a reply naming the limit and its config key; nothing reaches the model', async () => {
    const { tg, model } = env;
    const before = model.requests.length;
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, document: { file_name: 'huge.bin', file_size: 5 * 1024 * 1024 } });
    const refusal = await waitForText(tg, ALICE.dm.id, 'too large');
    expect(String(params(refusal).text)).toContain('maxInboundMediaBytes');
    expect(String(params(refusal).text)).toContain('channels.telegram.accounts.main');
    expect(model.requests.length).toBe(before);
  });

  it('send_file delivers a workspace file with sendDocument (multipart upload); a path outside the workspace is refused', async () => {
    const { tg, model } = env;
    const saved = findInWorkspaces(env.gw, 'inbox/report.txt')!;
    const workspace = dirname(dirname(saved));
    writeFileSync(join(workspace, 'summary.md'), '# Summary\n\nAll good.\n');
    const since = tg.calls.length;
    model.enqueue(
      {
        toolUses: [
          { name: 'send_file', input: { path: 'summary.md', caption: 'your summary' }, id: 'toolu_send' },
          { name: 'send_file', input: { path: '../../../../credentials.json' }, id: 'toolu_escape' },
          { name: 'send_file', input: { path: '/etc/passwd' }, id: 'toolu_abs' },
        ],
      },
      { text: 'Sent.' },
    );
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'send me the summary' });
    await tg.waitForAnswered(isFinal(ALICE.dm.id), 15_000, since);
    const upload = tg.calls.find((c) => c.seq > since && c.method === 'sendDocument');
    expect(upload?.status).toBe(200);
    expect(String(params(upload!).document)).toMatch(/^attach:\/\//);
    const docs = tg.documents(TOKEN, ALICE.dm.id);
    expect(docs).toHaveLength(1);
    expect(docs[0]!.document.file_name).toBe('summary.md');
    expect(docs[0]!.caption).toBe('your summary');
    expect(docs[0]!.content.toString('utf8')).toBe('# Summary\n\nAll good.\n');
    expect(toolResultFor(model, 'toolu_send')).toMatchObject({ content: expect.stringContaining('Sent summary.md') });
    expect(toolResultFor(model, 'toolu_send').is_error).toBeFalsy();
    for (const id of ['toolu_escape', 'toolu_abs']) {
      const refused = toolResultFor(model, id);
      expect(refused.is_error).toBe(true);
      expect(refused.content).toContain('refused');
    }
  });
});
