import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

/** Channel cursors: one text value per key, replaced by each set, surviving the handle (see the engines' own tests for restarts). */
export function cursorContract(store: StorageRef): void {
  it('reads null for a key never set, and the last value set afterwards', async () => {
    const s = store();
    expect(await s.cursors.get('telegram:default:offset')).toBeNull();
    await s.cursors.set('telegram:default:offset', '41');
    expect(await s.cursors.get('telegram:default:offset')).toBe('41');
    await s.cursors.set('telegram:default:offset', '42');
    expect(await s.cursors.get('telegram:default:offset')).toBe('42');
  });

  it('keeps keys independent, and stores any text value as given', async () => {
    const s = store();
    await s.cursors.set('telegram:a:offset', '7');
    await s.cursors.set('telegram:b:offset', '');
    const odd = `{"x":"é 東京 \\\\ ' \\" 𠀀"}`;
    await s.cursors.set('telegram:c:offset', odd);
    expect(await s.cursors.get('telegram:a:offset')).toBe('7');
    expect(await s.cursors.get('telegram:b:offset')).toBe('');
    expect(await s.cursors.get('telegram:c:offset')).toBe(odd);
    expect(await s.cursors.get('telegram:A:offset')).toBeNull();
    await s.cursors.set('telegram:b:offset', '9');
    expect(await s.cursors.get('telegram:a:offset')).toBe('7');
    expect(await s.cursors.get('telegram:b:offset')).toBe('9');
  });
}
