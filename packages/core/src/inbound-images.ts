import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ImageBlock, UserBlock } from '@switchboard/agent';
import type { InboundMessage } from './channel.js';

/** The largest image passed to the model as a content block (the Messages API takes at most 5 MB per image). */
export const MAX_IMAGE_BLOCK_BYTES = 5 * 1024 * 1024;

/** An image a person sent, saved in their workspace, to show the model as an image block (see {@link userContent}). */
export interface InboundImage {
  /** Absolute path of the saved file. */
  path: string;
  mediaType: ImageBlock['source']['media_type'];
  /**
   * sha256 (hex) of the bytes saved. The file is read again when the turn starts, and a workspace
   * a sandboxed command can change may by then hold something else under that name (a swapped
   * `inbox/` link): a block is built only from the very bytes the person sent.
   */
  sha256?: string;
}

/** The sha256 (hex) of `data`, as {@link InboundImage.sha256} holds it. */
export function imageDigest(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The image type of `data` by its first bytes (JPEG, PNG, GIF, WebP), whatever the platform declared; undefined for anything else. Pure. */
export function sniffImageType(data: Uint8Array): ImageBlock['source']['media_type'] | undefined {
  const b = (i: number) => data[i] ?? -1;
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return 'image/jpeg';
  if (b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47) return 'image/png';
  if (b(0) === 0x47 && b(1) === 0x49 && b(2) === 0x46 && b(3) === 0x38) return 'image/gif';
  const ascii = (from: number, to: number) => String.fromCharCode(...data.subarray(from, to));
  if (data.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * The content of a turn's user entry: the message's text, then (when `imageBlocks` is on: the
 * model accepts images) one image block per image it carries that can still be read and is at
 * most {@link MAX_IMAGE_BLOCK_BYTES}. Never throws: an image that cannot be read is left out (the
 * text already names its path).
 */
export async function userContent(message: InboundMessage, imageBlocks: boolean): Promise<UserBlock[]> {
  const content: UserBlock[] = [{ type: 'text', text: message.text }];
  if (!imageBlocks || !Array.isArray(message.images)) return content;
  for (const image of message.images.slice(0, 20)) {
    try {
      const data = await readFile(image.path);
      if (data.byteLength > MAX_IMAGE_BLOCK_BYTES || sniffImageType(data) !== image.mediaType) continue;
      if (typeof image.sha256 !== 'string' || imageDigest(data) !== image.sha256) continue;
      content.push({ type: 'image', source: { type: 'base64', media_type: image.mediaType, data: data.toString('base64') } });
    } catch {
      // Gone or unreadable since it was saved: the text still says where it was.
    }
  }
  return content;
}
