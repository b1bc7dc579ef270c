import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatewayChildEnv, repoRoot, trackChild } from '@switchboard/testkit';

/**
 * A scratch vitest project (own config, no global setup) with one test file, and the run-log,
 * canary-marker and egress-record paths `npm test` should use for it — never the outer run's.
 */
function scratch(testBody: string, opts: { egress?: boolean; canarySeen?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'swb-npmtest-'));
  writeFileSync(join(dir, 'vitest.config.mjs'), `export default { test: { include: ['*.check.mjs'], root: ${JSON.stringify(dir)} } };\n`);
  writeFileSync(join(dir, 'one.check.mjs'), `import { it, expect } from 'vitest';\nit('one', () => { ${testBody} });\n`);
  const env = {
    SWITCHBOARD_RUN_LOG: join(dir, 'run.log'),
    SWITCHBOARD_CANARY_SEEN: join(dir, 'canary-key-seen'),
    SWITCHBOARD_EGRESS_LOG: join(dir, 'egress-refused'),
    npm_config_update_notifier: 'false',
  };
  writeFileSync(env.SWITCHBOARD_RUN_LOG, 'a clean line\n');
  if (opts.canarySeen !== false) writeFileSync(env.SWITCHBOARD_CANARY_SEEN, 'seen\n');
  if (opts.egress) writeFileSync(env.SWITCHBOARD_EGRESS_LOG, '[no-egress:1] refused 192.0.2.1:443\n');
  return { dir, env };
}

function npmTest(dir: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn('npm', ['test', '--', '--config', join(dir, 'vitest.config.mjs'), '--root', dir], {
    cwd: repoRoot(),
    env: gatewayChildEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

describe('npm test', () => {
  it('runs every step even when vitest fails, and exits non-zero', { timeout: 120_000 }, async () => {
    const { dir, env } = scratch(`expect(1).toBe(2);`, { canarySeen: false });
    const r = await npmTest(dir, env);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain('=== vitest ===');
    // the later steps still ran: the canary scan reports its own problem, the egress record is clean
    expect(r.out).toContain('=== canary scan ===');
    expect(r.out).toContain('canary-scan: FAILED');
    expect(r.out).toContain('no-egress: ok');
    expect(r.out).toContain('FAILED: vitest, canary scan');
  });

  it('passes when every step passes, and fails on a refused connection even when the tests passed', { timeout: 120_000 }, async () => {
    const ok = scratch(`expect(1).toBe(1);`);
    const good = await npmTest(ok.dir, ok.env);
    expect(good.out).toContain('all steps passed');
    expect(good.code, good.out).toBe(0);
    // The lint step (Biome, then the dependency check) runs first, over the real tree.
    expect(good.out.indexOf('=== lint ===')).toBeGreaterThanOrEqual(0);
    expect(good.out.indexOf('=== lint ===')).toBeLessThan(good.out.indexOf('=== vitest ==='));
    expect(good.out).toContain('check-deps: every package.json matches its imports');
    const leaky = scratch(`expect(1).toBe(1);`, { egress: true });
    const bad = await npmTest(leaky.dir, leaky.env);
    expect(bad.code, bad.out).not.toBe(0);
    expect(bad.out).toContain('refused 192.0.2.1:443');
    expect(bad.out).toContain('FAILED: no-egress record');
  });
});
