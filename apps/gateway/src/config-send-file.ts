import { duration } from '@switchboard/core';
import { z } from 'zod';

const MIB = 1024 * 1024;

/**
 * `tools.sendFile` (docs/configuration.md#tools): the `send_file` tool, which delivers a workspace
 * file to the chat. On by default (`enabled: false` removes it); it is in `group:fs` (so the `coding` and `full`
 * profiles offer it, and `group:fs` rules cover it).
 */
export const sendFileSchema = z
  .strictObject({
    /** Register `send_file`. */
    enabled: z.boolean().default(true),
    /** Largest file it sends, in bytes (Telegram bots may send up to 50 MiB). */
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(2 * 1024 * MIB)
      .default(50 * MIB),
    /** How long a file sent on the WebSocket channel stays downloadable at `GET /files/{id}`. */
    downloadTtl: duration.refine((ms) => ms >= 1000, 'must be at least 1s').default(3_600_000),
    /** Bytes the gateway keeps in memory for those downloads, in all (the oldest go first). */
    downloadMaxBytes: z
      .number()
      .int()
      .min(1)
      .max(4 * 1024 * MIB)
      .default(256 * MIB),
  })
  .prefault({});

export type SendFileConfig = z.output<typeof sendFileSchema>;
