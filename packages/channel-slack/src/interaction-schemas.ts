import { z } from 'zod';

const id = z.string().max(256).optional();

/** The fields of a `block_actions` payload the adapter reads; anything else passes through unread. */
export const blockActionsSchema = z.looseObject({
  type: z.string().max(64).optional(),
  user: z.looseObject({ id, team_id: id }).optional(),
  team: z.looseObject({ id }).nullable().optional(),
  channel: z.looseObject({ id }).optional(),
  container: z.looseObject({ channel_id: id, message_ts: id, thread_ts: id }).optional(),
  message: z.looseObject({ ts: id, thread_ts: id }).optional(),
  actions: z
    .array(z.looseObject({ action_id: id }))
    .max(100)
    .optional(),
});

/** A block_actions payload, as far as the adapter reads it. */
export type BlockActionsPayload = z.output<typeof blockActionsSchema>;

/** A slash command's fields (form-encoded over HTTP, the envelope payload in Socket Mode). */
export const slashCommandSchema = z.looseObject({
  command: z.string().max(256).optional(),
  text: z.string().max(4000).optional(),
  user_id: id,
  team_id: id,
  channel_id: id,
});

/** A slash command, as far as the adapter reads it. */
export type SlashCommand = z.output<typeof slashCommandSchema>;

/** The parsed value, or the first problem worded with its field (`actions.0.action_id: expected string`). */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): { ok: true; value: T } | { ok: false; problem: string } {
  let r: ReturnType<typeof schema.safeParse>;
  try {
    r = schema.safeParse(value ?? {});
  } catch {
    // Only hostile in-process values (throwing getters, proxies) get here; JSON never does.
    return { ok: false, problem: 'payload: unreadable' };
  }
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  return { ok: false, problem: issue ? `${issue.path.join('.') || 'payload'}: ${issue.message}` : 'invalid' };
}
