import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeSlackFiles, mayCarryToken, slackInboundFile } from '../src/files.js';

describe('describeSlackFiles', () => {
  it('reads Slack file objects, with stand-ins for what is missing', () => {
    const refs = describeSlackFiles({
      files: [
        { id: 'F1', name: 'notes.csv', mimetype: 'text/csv', size: 8, url_private_download: 'https://files.slack.com/files-pri/T-F1/download/notes.csv' },
        { id: 'F2', mimetype: 'image/png', title: 'Screenshot' },
        { name: 'no id' },
        'not an object',
        null,
      ],
    });
    expect(refs).toEqual([
      { id: 'F1', name: 'notes.csv', mimeType: 'text/csv', kind: 'document', size: 8, url: 'https://files.slack.com/files-pri/T-F1/download/notes.csv' },
      { id: 'F2', name: 'Screenshot', mimeType: 'image/png', kind: 'image' },
    ]);
    expect(describeSlackFiles({ files: 'nope' })).toEqual([]);
    expect(describeSlackFiles(null)).toEqual([]);
  });

  it('is total over hostile events and bounded (property)', () => {
    const hostileFile = fc.record(
      {
        id: fc.oneof(fc.string(), fc.anything()),
        name: fc.oneof(fc.string({ maxLength: 3000 }), fc.anything()),
        mimetype: fc.anything(),
        size: fc.oneof(fc.double(), fc.constant(Number.POSITIVE_INFINITY), fc.constant(-5), fc.anything()),
        url_private_download: fc.oneof(fc.webUrl(), fc.anything()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ files: fc.oneof(fc.array(hostileFile, { maxLength: 40 }), fc.anything()) })), (event) => {
        const refs = describeSlackFiles(event);
        expect(refs.length).toBeLessThanOrEqual(20);
        for (const r of refs) {
          expect(typeof r.id).toBe('string');
          expect(r.name.length).toBeGreaterThan(0);
          if (r.size !== undefined) expect(Number.isFinite(r.size) && r.size >= 0).toBe(true);
          if (r.url !== undefined) expect(typeof r.url).toBe('string');
        }
      }),
    );
  });
});

describe('the bot token goes to Slack hosts only', () => {
  it('allows files.slack.com over https and the configured apiUrl origin, nothing else', () => {
    const api = 'https://slack.com/api/';
    expect(mayCarryToken('https://files.slack.com/files-pri/T-F/x', api)).toBe(true);
    expect(mayCarryToken('http://files.slack.com/files-pri/T-F/x', api)).toBe(false);
    expect(mayCarryToken('https://files.slack.com.evil.example/x', api)).toBe(false);
    expect(mayCarryToken('https://evil.example/?h=files.slack.com', api)).toBe(false);
    expect(mayCarryToken('http://127.0.0.1:9000/files-pri/x', 'http://127.0.0.1:9000/api/')).toBe(true);
    expect(mayCarryToken('http://127.0.0.1:9001/files-pri/x', 'http://127.0.0.1:9000/api/')).toBe(false);
    expect(mayCarryToken('not a url', api)).toBe(false);
  });

  it('refuses to fetch a foreign link, and a file without a link', async () => {
    const src = { token: 'xoxb-secret', apiUrl: 'https://slack.com/api/', maxBytes: 1024 };
    const ref = { id: 'F1', name: 'x', mimeType: 'text/plain', kind: 'document' as const };
    await expect(slackInboundFile({ ...ref, url: 'https://evil.example/steal' }, src).fetch()).rejects.toThrow(/not on a Slack host/u);
    await expect(slackInboundFile(ref, src).fetch()).rejects.toThrow(/no download link/u);
  });
});
