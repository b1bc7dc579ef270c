import { z } from 'zod';

/** A Telegram `User` (the fields the adapter reads). */
export const userSchema = z.looseObject({
  id: z.number().int(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const entitySchema = z.looseObject({
  type: z.string(),
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
  user: userSchema.optional(),
});

const fileSchema = z.looseObject({ file_id: z.string(), file_size: z.number().optional() });

const baseMessage = {
  message_id: z.number().int(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  from: userSchema.optional(),
  chat: z.looseObject({
    id: z.number().int(),
    type: z.enum(['private', 'group', 'supergroup', 'channel']),
    title: z.string().optional(),
    is_forum: z.boolean().optional(),
  }),
  date: z.number(),
  text: z.string().optional(),
  entities: z.array(entitySchema).optional(),
  caption: z.string().optional(),
  caption_entities: z.array(entitySchema).optional(),
  photo: z.array(fileSchema).optional(),
  document: fileSchema.optional(),
  video: fileSchema.optional(),
  audio: fileSchema.optional(),
  voice: fileSchema.optional(),
  animation: fileSchema.optional(),
  video_note: fileSchema.optional(),
  sticker: fileSchema.optional(),
};

/** A message replied to (one level, as Telegram nests it). */
const repliedSchema = z.looseObject(baseMessage);

/** A Telegram `Message`. */
export const messageSchema = z.looseObject({ ...baseMessage, reply_to_message: repliedSchema.optional() });

/** A Telegram `CallbackQuery`. */
export const callbackQuerySchema = z.looseObject({
  id: z.string(),
  from: userSchema,
  message: messageSchema.optional(),
  data: z.string().optional(),
});

/** A Telegram `Update`, validated before anything is done with it (webhook bodies and polled updates alike). */
export const updateSchema = z.looseObject({
  update_id: z.number().int().min(0),
  message: messageSchema.optional(),
  edited_message: messageSchema.optional(),
  callback_query: callbackQuerySchema.optional(),
});

export type TgUser = z.infer<typeof userSchema>;
export type TgMessage = z.infer<typeof messageSchema>;
export type TgRepliedMessage = z.infer<typeof repliedSchema>;
export type TgCallbackQuery = z.infer<typeof callbackQuerySchema>;
export type TgUpdate = z.infer<typeof updateSchema>;
