import { z } from 'zod';

/**
 * `files` (docs/configuration.md#files): what the gateway does with files people send (Telegram,
 * Slack). They land in the sender's workspace under `inbox/`; the size limit is each channel
 * account's `maxInboundMediaBytes`.
 */
export const inboundFilesSchema = z
  .strictObject({
    /** Images (JPEG, PNG, GIF, WebP up to 5 MB) also reach the model as image content blocks; off for a model without vision. */
    imageBlocks: z.boolean().default(true),
  })
  .prefault({});

export type InboundFilesConfig = z.output<typeof inboundFilesSchema>;
