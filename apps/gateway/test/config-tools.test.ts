import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { DEFAULT_SANDBOX_LIMITS } from '@switchboard/tools';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import { execSettingsOf, uidRange } from '../src/config-tools.js';
import { resolveExecHost } from '../src/exec-host.js';
import { execLoopTimeout } from '../src/wiring/exec.js';
import { parseTestConfig as parse } from './config-fixture.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('tools.exec', () => {
  it('has a default for every key', () => {
    const exec = parse('{}').tools.exec;
    expect(exec).toMatchObject({
      sandbox: 'bwrap',
      sandboxUser: { uids: '61000-61031', gid: 61000 },
      concurrency: { gateway: 4, session: 1 },
      outputChars: 30_000,
    });
    expect(uidRange(exec)).toEqual({ first: 61000, last: 61031 });
    expect(execSettingsOf(exec, undefined, DEFAULT_SANDBOX_LIMITS)).toEqual({
      network: false,
      timeoutMs: 120_000,
      maxTimeoutMs: 600_000,
      limits: DEFAULT_SANDBOX_LIMITS,
    });
  });

  it('an agent overrides network, timeouts and single limits; the rest comes from tools.exec', () => {
    const cfg = parse(
      '{ tools: { exec: { timeout: "30s", limits: { processes: 64, addressSpaceMiB: 512 } } }, agents: { default: { toolOptions: { exec: { network: true, maxTimeout: "20s", limits: { processes: 32 } } } } } }',
    );
    const settings = execSettingsOf(cfg.tools.exec, cfg.agents.default?.toolOptions.exec, DEFAULT_SANDBOX_LIMITS);
    // A default timeout above the agent's maximum is cut to it.
    expect(settings).toMatchObject({ network: true, timeoutMs: 20_000, maxTimeoutMs: 20_000 });
    expect(settings.limits).toEqual({ ...DEFAULT_SANDBOX_LIMITS, processes: 32, addressSpaceBytes: 512 * 1024 * 1024 });
    // The loop's own limit backs the longest maxTimeout up with the kill grace and a margin.
    expect(execLoopTimeout(cfg)).toBe(600_000 + 2_000 + 10_000);
  });

  it('refuses bad values, naming the key', () => {
    expect(() => parse('{ tools: { exec: { sandbox: "docker" } } }')).toThrow(/tools\.exec\.sandbox/);
    expect(() => parse('{ tools: { exec: { sandboxUser: { uids: "9-3" } } } }')).toThrow(/tools\.exec\.sandboxUser\.uids/);
    expect(() => parse('{ tools: { exec: { sandboxUser: { uids: "0-3" } } } }')).toThrow(/tools\.exec\.sandboxUser\.uids/);
    expect(() => parse('{ tools: { exec: { sandboxUser: { uids: "61000-61001" } } } }')).toThrow(
      /tools\.exec\.concurrency\.gateway: .*more than the 2 uids of tools\.exec\.sandboxUser\.uids/,
    );
    expect(() => parse('{ tools: { exec: { bwrapPath: "bwrap" } } }')).toThrow(/tools\.exec\.bwrapPath: .*absolute/);
    expect(() => parse('{ tools: { exec: { progressInterval: "50ms" } } }')).toThrow(/tools\.exec\.progressInterval/);
    expect(() => parse('{ tools: { exec: { limits: { processes: 1 } } } }')).toThrow(/tools\.exec\.limits\.processes/);
    expect(() => parse('{ tools: { exec: { netwrok: true } } }')).toThrow(/tools\.exec\.netwrok/);
    expect(() => parse('{ agents: { default: { toolOptions: { exec: { sandbox: "none" } } } } }')).toThrow(/agents\.default\.toolOptions\.exec\.sandbox/);
  });

  it('hostile shapes are a ConfigError, never a crash', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          parse(JSON.stringify({ tools: { exec: value } }));
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('resolveExecHost', () => {
  const exec = parse('{}').tools.exec;

  it('keeps only PATH entries the sandbox mirrors, and finds bwrap on the PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-exec-host-'));
    dirs.push(dir);
    const bin = join(dir, 'usr', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'bwrap'), '#!/bin/sh\n');
    chmodSync(join(bin, 'bwrap'), 0o755);
    const host = resolveExecHost(exec, `/root/.local/bin:${bin}:/usr/local/bin:/usr/bin:relative:/bin`, 0);
    expect(host.bwrapPath).toBe(join(bin, 'bwrap'));
    expect(host.path).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(host.hostIsRoot).toBe(true);
  });

  it('without bwrap on the PATH (or a missing bwrapPath) there is no bwrap; an empty PATH gets the default sandbox PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-exec-host-'));
    dirs.push(dir);
    expect(resolveExecHost(exec, dir, 1000)).toEqual({ path: '/usr/local/bin:/usr/bin:/bin', bwrapPath: undefined, hostIsRoot: false });
    const named = parse(`{ tools: { exec: { bwrapPath: ${JSON.stringify(join(dir, 'nope'))} } } }`).tools.exec;
    expect(resolveExecHost(named, '/usr/bin', 0).bwrapPath).toBeUndefined();
    expect(resolveExecHost(exec, undefined, undefined).hostIsRoot).toBe(false);
  });
});
