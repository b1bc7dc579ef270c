import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CANARIES, CANARY_SLACK_BOT_TOKEN, CANARY_TELEGRAM_TOKEN, repoRoot, scanForCanaries } from '../src/index.js';

const cli = join(repoRoot(), 'packages', 'testkit', 'dist', 'canary-scan-cli.js');

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function fixture(logLines: string[], seen: string | undefined): { dir: string; log: string; seen: string } {
  const dir = mkdtempSync(join(tmpdir(), 'swb-scan-'));
  const log = join(dir, 'run.log');
  writeFileSync(log, logLines.map((l) => `${l}\n`).join(''));
  const seenPath = join(dir, 'canary-key-seen');
  if (seen !== undefined) writeFileSync(seenPath, seen);
  return { dir, log, seen: seenPath };
}

describe('canary scan CLI', () => {
  it('fails on a planted canary and names it without printing the value', async () => {
    const f = fixture(['[gateway:1] {"msg":"starting"}', `[gateway:1] {"err":"GET /bot${CANARY_TELEGRAM_TOKEN}/getMe failed"}`, 'ok'], 'seen\n');
    const { code, stdout, stderr } = await run(['--log', f.log, '--seen', f.seen]);
    expect(code).toBe(1);
    expect(stderr).toContain('CANARY_TELEGRAM_TOKEN');
    expect(stderr).toContain(`${f.log} at line 2`);
    for (const value of ALL_CANARIES) expect(stdout + stderr).not.toContain(value);
  });

  it('passes on a clean log with the seen marker, using env paths', async () => {
    const f = fixture(['[gateway:1] {"msg":"listening"}', '[fake-anthropic:1] {"request":"req_test_1"}'], 'x fake-anthropic req_test_1\n');
    const { code, stdout } = await run([], { SWITCHBOARD_RUN_LOG: f.log, SWITCHBOARD_CANARY_SEEN: f.seen });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^canary-scan: ok — \d+ secrets, 2 lines/);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });

  it('fails when the marker file is missing or empty', async () => {
    const missing = fixture(['clean'], undefined);
    const a = await run(['--log', missing.log, '--seen', missing.seen]);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain('missing or empty');
    const empty = fixture(['clean'], '');
    expect((await run(['--log', empty.log, '--seen', empty.seen])).code).toBe(1);
  });

  it('also looks for --extra values and rejects unknown flags', async () => {
    const f = fixture(['token=op_secret_123456'], 'seen\n');
    const r = await run(['--log', f.log, '--seen', f.seen, '--extra', 'op_secret_123456']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('extra#1');
    expect(r.stderr).not.toContain('op_secret_123456');
    expect((await run(['--bogus'])).code).toBe(2);
  });
});

describe('scanForCanaries', () => {
  it('reports every hit by name, file and line', () => {
    const f = fixture(['a', `b ${CANARY_SLACK_BOT_TOKEN}`, `c ${CANARY_SLACK_BOT_TOKEN} ${CANARY_TELEGRAM_TOKEN}`], 'seen');
    const result = scanForCanaries({ logPaths: [f.log], seenPath: f.seen });
    expect(result.ok).toBe(false);
    expect(result.hits).toHaveLength(3);
    expect(result.hits).toEqual(
      expect.arrayContaining([
        { file: f.log, line: 2, name: 'CANARY_SLACK_BOT_TOKEN' },
        { file: f.log, line: 3, name: 'CANARY_TELEGRAM_TOKEN' },
        { file: f.log, line: 3, name: 'CANARY_SLACK_BOT_TOKEN' },
      ]),
    );
    expect(result.seenCount).toBe(1);
  });
});
