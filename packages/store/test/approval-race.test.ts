import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { engines, openTarget, type StorageTarget } from './engines.js';

const root = mkdtempSync(join(tmpdir(), 'swb-race-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const storeDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** A separate process that opens the database, waits for "go" on stdin, claims, and prints the result. */
function claimer(target: StorageTarget, id: string, status: string): { go: () => void; result: Promise<boolean> } {
  const open =
    target.kind === 'sqlite'
      ? `store.openSqliteStorage({ file: ${JSON.stringify(target.file)} })`
      : `await store.openPostgresStorage({ url: ${JSON.stringify(target.url)}, max: 2 })`;
  const script = `
    const store = await import(${JSON.stringify(storeDist)});
    const s = ${open};
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      const won = await s.approvals.claim(${JSON.stringify(id)}, ${JSON.stringify(status)}, 'process:' + process.pid);
      process.stdout.write(JSON.stringify({ won }) + '\\n');
      await s.close();
      process.exit(0);
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const result = new Promise<boolean>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) onReady();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { won: boolean }).won);
    });
    child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`claimer exited ${code}`))));
  });
  return { go: () => void ready.then(() => child.stdin.write('go\n')), result };
}

describe.each(engines())('approval claims across processes (%s)', (name, engine) => {
  it('exactly one of two processes wins the same approval, every time', async () => {
    const target = await engine.target(join(root, `race-${name}.db`));
    const s = await openTarget(target);
    for (let i = 0; i < 5; i++) {
      const { approval } = await s.approvals.create({
        turnId: `turn-${i}`,
        toolUseId: 'toolu_race',
        sessionId: 'sess',
        tool: 'write_file',
        summary: 'race',
        input: {},
        requesterPrincipalId: null,
        conversation: { channel: 'websocket', account: 'default', id: 'p', kind: 'dm' },
        expiresAt: new Date(Date.now() + 60_000),
        source: 'mode',
        alwaysRule: null,
      });
      const a = claimer(target, approval.id, 'allowed');
      const b = claimer(target, approval.id, 'denied');
      a.go();
      b.go();
      const results = await Promise.all([a.result, b.result]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const decided = await s.approvals.get(approval.id);
      expect(decided!.status).toBe(results[0] ? 'allowed' : 'denied');
    }
    await s.close();
  });
});
