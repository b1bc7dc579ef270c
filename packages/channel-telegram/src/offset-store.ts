import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The persisted getUpdates offset of one bot account: `<dataDir>/telegram-<account>.offset`,
 * replaced atomically (write a temp file, then rename) so a crash leaves the old or the new value.
 */
export class OffsetStore {
  readonly file: string;

  constructor(dataDir: string, account: string) {
    this.file = join(dataDir, `telegram-${account.replace(/[^A-Za-z0-9_-]/g, '_')}.offset`);
  }

  /** The stored offset, or undefined when none was stored (or the file is unreadable). */
  load(): number | undefined {
    try {
      const v = (JSON.parse(readFileSync(this.file, 'utf8')) as { offset?: unknown }).offset;
      return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores `offset` (the next update id to ask for). */
  save(offset: number): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ offset })}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}
