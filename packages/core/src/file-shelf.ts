import { randomBytes } from 'node:crypto';

/** A file offered for download at `GET /files/{id}` (see {@link FileShelf}). */
export interface ShelvedFile {
  id: string;
  /** The only principal who may download it (with one of their own client tokens). */
  principalId: string;
  name: string;
  mimeType: string;
  data: Uint8Array;
  expiresAt: Date;
}

/** What {@link FileShelf.put} answers: where the file can be fetched, and until when. */
export interface ShelfTicket {
  id: string;
  /** The path of the download route: `/files/<id>`. */
  url: string;
  expiresAt: Date;
  size: number;
}

/** Options of {@link FileShelf}. */
export interface FileShelfOptions {
  /** How long a file stays downloadable (`limits.fileDownloadTtl`). */
  ttlMs: number;
  /** Bytes kept at most (`limits.fileDownloadMaxBytes`): the oldest files go first. */
  maxBytes: number;
  now?: () => Date;
}

/**
 * Files the gateway holds for their owners to download (WebSocket `file` frames): in memory,
 * each under an unguessable id (192 random bits, base64url), for `ttlMs`, at most `maxBytes` in
 * all (the oldest are dropped first). Lost on restart (the frame says when it expires).
 */
export class FileShelf {
  private readonly files = new Map<string, ShelvedFile>();
  private bytes = 0;

  constructor(private readonly options: FileShelfOptions) {}

  /**
   * Shelves a file for `principalId`; returns its ticket.
   * @throws {Error} when the file alone is larger than `maxBytes`.
   */
  put(file: Omit<ShelvedFile, 'id' | 'expiresAt'>): ShelfTicket {
    if (file.data.byteLength > this.options.maxBytes) {
      throw new Error(`the file is larger than the ${this.options.maxBytes} bytes the gateway keeps for downloads`);
    }
    this.sweep();
    while (this.bytes + file.data.byteLength > this.options.maxBytes) {
      const oldest = this.files.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
    const id = randomBytes(24).toString('base64url');
    const expiresAt = new Date(this.now().getTime() + this.options.ttlMs);
    this.files.set(id, { ...file, id, expiresAt });
    this.bytes += file.data.byteLength;
    return { id, url: `/files/${id}`, expiresAt, size: file.data.byteLength };
  }

  /** The file under `id` if it has not expired and belongs to `principalId`; null otherwise (whichever the reason). */
  get(id: string, principalId: string): ShelvedFile | null {
    const file = this.files.get(id);
    if (!file) return null;
    if (file.expiresAt.getTime() <= this.now().getTime()) {
      this.remove(id);
      return null;
    }
    return file.principalId === principalId ? file : null;
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }

  private sweep(): void {
    const now = this.now().getTime();
    for (const [id, f] of this.files) if (f.expiresAt.getTime() <= now) this.remove(id);
  }

  private remove(id: string): void {
    const f = this.files.get(id);
    if (!f) return;
    this.files.delete(id);
    this.bytes -= f.data.byteLength;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }
}
