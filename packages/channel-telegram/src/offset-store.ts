import { closeSync, openSync, readSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { ChannelCursors } from '@switchboard/core';
import type { Logger } from 'pino';
import { z } from 'zod';

/** The cursor name of the getUpdates offset (the gateway stores it as `telegram:<account>:offset`). */
export const OFFSET_CURSOR = 'offset';

/** A legacy offset file is a few bytes; anything longer is not one. */
const MAX_LEGACY_BYTES = 1024;

const offsetValue = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const legacyFile = z.object({ offset: offsetValue });

/** The offset file releases before issue 19 kept: `<dataDir>/telegram-<account>.offset`. */
export function legacyOffsetFile(dataDir: string, account: string): string {
  return join(dataDir, `telegram-${account.replace(/[^A-Za-z0-9_-]/g, '_')}.offset`);
}

/**
 * Parses a legacy offset file's text (`{"offset":<n>}`): the offset, or an error naming what is
 * wrong. Never throws; the offset is a non-negative safe integer.
 */
export function parseLegacyOffset(text: string): { ok: true; offset: number } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const r = legacyFile.safeParse(json);
  if (!r.success) return { ok: false, error: `offset: ${r.error.issues[0]?.message ?? 'invalid'} (expected {"offset": <non-negative integer>})` };
  return { ok: true, offset: r.data.offset };
}

/** Parses a stored cursor value (decimal digits): the offset, or undefined when it is not one. */
export function parseOffsetCursor(value: string): number | undefined {
  if (!/^\d{1,16}$/.test(value)) return undefined;
  const n = Number(value);
  return offsetValue.safeParse(n).success ? n : undefined;
}

/**
 * The persisted getUpdates offset of one bot account: the channel cursor `offset` (a row in the
 * gateway's database). On the first load without a row, the offset a legacy file holds is
 * imported once and the file renamed `<file>.imported`, so an upgrade loses nothing and never
 * reads the file again.
 */
export class OffsetStore {
  constructor(
    private readonly cursors: ChannelCursors,
    /** The legacy offset file ({@link legacyOffsetFile}). */
    readonly legacyFile: string,
    private readonly log: Logger,
  ) {}

  /** The stored offset, or undefined when none was stored. Rejects on a storage error. */
  async load(): Promise<number | undefined> {
    const stored = await this.cursors.get(OFFSET_CURSOR);
    if (stored !== null) {
      this.retireLegacy();
      const offset = parseOffsetCursor(stored);
      if (offset === undefined)
        this.log.warn({ event: 'telegram_offset_invalid' }, 'telegram: the stored update offset is not a non-negative integer; ignoring it');
      return offset;
    }
    return this.importLegacy();
  }

  /** Stores `offset` (the next update id to ask for). Rejects on a storage error. */
  async save(offset: number): Promise<void> {
    await this.cursors.set(OFFSET_CURSOR, String(offset));
  }

  private async importLegacy(): Promise<number | undefined> {
    const text = this.readLegacy();
    if (text === undefined) return undefined;
    const parsed = parseLegacyOffset(text);
    if (!parsed.ok) {
      this.log.warn(
        { event: 'telegram_offset_import_ignored', file: this.legacyFile, error: parsed.error },
        `telegram: ignoring the legacy offset file ${this.legacyFile}: ${parsed.error}`,
      );
      this.retireLegacy();
      return undefined;
    }
    await this.save(parsed.offset);
    this.retireLegacy();
    this.log.info(
      { event: 'telegram_offset_imported', file: this.legacyFile, offset: parsed.offset },
      `telegram: imported the update offset from ${this.legacyFile} into the database`,
    );
    return parsed.offset;
  }

  /** The legacy file's first bytes, or undefined when there is none (or it cannot be read). */
  private readLegacy(): string | undefined {
    let fd: number;
    try {
      fd = openSync(this.legacyFile, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log.warn({ event: 'telegram_offset_import_ignored', file: this.legacyFile, error: String(err) }, 'telegram: cannot read the legacy offset file');
      return undefined;
    }
    try {
      const buf = Buffer.alloc(MAX_LEGACY_BYTES + 1);
      const n = readSync(fd, buf, 0, buf.length, 0);
      return n > MAX_LEGACY_BYTES ? '' : buf.subarray(0, n).toString('utf8');
    } catch {
      return '';
    } finally {
      closeSync(fd);
    }
  }

  /** Renames the legacy file out of the way (a crash between the import and here imports the same value again). */
  private retireLegacy(): void {
    try {
      renameSync(this.legacyFile, `${this.legacyFile}.imported`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      try {
        unlinkSync(this.legacyFile);
      } catch {
        this.log.warn({ event: 'telegram_offset_file_kept', file: this.legacyFile, error: String(err) }, 'telegram: could not remove the legacy offset file');
      }
    }
  }
}
