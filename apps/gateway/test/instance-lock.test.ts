import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InstanceLockedError, acquireInstanceLock, probeInstanceLock } from '../src/instance-lock.js';

const dir = () => mkdtempSync(join(tmpdir(), 'swb-lock-'));

describe('instance lock', () => {
  it('a data dir never locked, or missing, is not running', () => {
    const d = dir();
    expect(probeInstanceLock(d)).toEqual({ running: false });
    expect(probeInstanceLock(join(d, 'missing'))).toEqual({ running: false });
    // The probe creates nothing.
    expect(existsSync(join(d, 'instance.lock'))).toBe(false);
  });

  it('while held: the probe says running with the sidecar, a second acquire is refused naming the holder', () => {
    const d = dir();
    const lock = acquireInstanceLock(d, { host: '127.0.0.1', port: 7420 });
    lock.update({ host: '127.0.0.1', port: 40123 });
    const probe = probeInstanceLock(d);
    expect(probe.running).toBe(true);
    expect(probe.info).toMatchObject({ pid: process.pid, host: '127.0.0.1', port: 40123 });
    expect(JSON.parse(readFileSync(join(d, 'instance.json'), 'utf8')).port).toBe(40123);
    let refused: unknown;
    try {
      acquireInstanceLock(d);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(InstanceLockedError);
    expect((refused as Error).message).toContain(`pid ${process.pid}`);
    expect((refused as Error).message).toContain('127.0.0.1:40123');
    // Probing did not take the lock from the holder.
    expect(probeInstanceLock(d).running).toBe(true);
    lock.release();
    expect(existsSync(join(d, 'instance.json'))).toBe(false);
    expect(probeInstanceLock(d)).toEqual({ running: false });
    const again = acquireInstanceLock(d);
    expect(probeInstanceLock(d).running).toBe(true);
    again.release();
  });
});
