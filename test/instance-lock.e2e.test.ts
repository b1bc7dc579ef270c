import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startGateway } from '@switchboard/testkit';
import { useFakeModel } from './helpers.js';

// Issue 11, acceptance 4: one gateway per data dir, held by a lock the kernel releases.
const model = useFakeModel();

describe('one instance per data dir (issue 11, acceptance 4)', () => {
  it('a second start on the same data dir exits 75 naming the first; after stop or SIGKILL a start succeeds', async () => {
    const first = await startGateway({ modelUrl: model.fake.url });
    // Another port (0 picks a free one), same data dir: only the lock can refuse it.
    const second = await runCli(['start'], { configPath: first.configPath, timeoutMs: 20_000 });
    expect(second.code).toBe(75);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain(`127.0.0.1:${first.port}`);
    expect(second.stderr).toContain(first.dataDir);
    expect(second.stderr).not.toMatch(/\n\s+at /);
    // The refused start wrote nothing over the first one's files.
    expect(JSON.parse(readFileSync(join(first.dataDir, 'endpoint'), 'utf8')).pid).toBe(first.pid);

    expect((await first.stop()).code).toBe(0);
    expect(existsSync(join(first.dataDir, 'endpoint'))).toBe(false);

    const again = await first.restart();
    expect(again.pid).not.toBe(first.pid);
    // SIGKILL: the kernel drops the lock with the process; no stale-lock cleanup is needed.
    await again.kill('SIGKILL');
    const third = await again.restart();
    expect((await runCli(['start'], { configPath: third.configPath, timeoutMs: 20_000 })).code).toBe(75);
    expect((await third.stop()).code).toBe(0);
  });
});
