import { describe, expect, it } from 'vitest';
import { DenialTracker } from '../../src/index.js';

describe('DenialTracker', () => {
  it('signals denial_limit after 3 denials in a row', () => {
    const t = new DenialTracker();
    expect(t.recordDenial('s').signal).toBeUndefined();
    expect(t.recordDenial('s').signal).toBeUndefined();
    expect(t.recordDenial('s')).toEqual({ consecutive: 3, total: 3, signal: 'denial_limit', limit: 'consecutive' });
  });

  it('resets the consecutive count on an allow, and keeps sessions apart', () => {
    const t = new DenialTracker();
    t.recordDenial('s');
    t.recordDenial('s');
    expect(t.recordAllow('s')).toEqual({ consecutive: 0, total: 2 });
    expect(t.recordDenial('s').signal).toBeUndefined();
    expect(t.recordDenial('other').consecutive).toBe(1);
  });

  it('signals after 20 denials in a session even when allows come between', () => {
    const t = new DenialTracker();
    let last: ReturnType<DenialTracker['recordDenial']> | undefined;
    for (let i = 0; i < 20; i++) {
      last = t.recordDenial('s');
      if (i < 19) expect(last.signal).toBeUndefined();
      t.recordAllow('s');
    }
    expect(last).toMatchObject({ total: 20, signal: 'denial_limit', limit: 'total' });
    expect(t.state('s').signal).toBe('denial_limit');
    t.reset('s');
    expect(t.state('s')).toEqual({ consecutive: 0, total: 0 });
  });

  it('takes custom limits and restores snapshots', () => {
    const t = new DenialTracker({ consecutive: 1 });
    expect(t.recordDenial('s').signal).toBe('denial_limit');
    const u = new DenialTracker();
    u.restore('s', { consecutive: 2, total: 5 });
    expect(u.recordDenial('s')).toMatchObject({ consecutive: 3, total: 6, signal: 'denial_limit' });
    expect(u.snapshot('s')).toEqual({ consecutive: 3, total: 6 });
  });

  it('keeps counts for a bounded number of sessions, dropping the one idle the longest', () => {
    const t = new DenialTracker({}, 2);
    t.recordDenial('a');
    t.recordDenial('b');
    t.recordDenial('a');
    t.recordDenial('c');
    expect(t.snapshot('a')).toEqual({ consecutive: 2, total: 2 });
    expect(t.snapshot('b')).toEqual({ consecutive: 0, total: 0 });
    expect(t.snapshot('c')).toEqual({ consecutive: 1, total: 1 });
  });
});
