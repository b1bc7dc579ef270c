import { slackModule } from '@switchboard/channel-slack/module';
import { telegramModule } from '@switchboard/channel-telegram/module';
import { openaiModule } from '@switchboard/channel-openai/module';
import { webhookModule } from '@switchboard/channel-webhook/module';
import { websocketModule } from '@switchboard/channel-websocket/module';
import type { ChannelModule } from '@switchboard/core';
import { z } from 'zod';

/**
 * Every channel type the gateway can run, in start-up order. Their `./module` entry points load
 * only the account schemas; a channel's implementation and platform SDK are imported by its
 * `createChannels`, which runs only for a type with configured accounts.
 */
export const CHANNEL_MODULES = [websocketModule, telegramModule, slackModule, webhookModule, openaiModule] as const;

/** An account id: the `<id>` of `channels.<type>.accounts.<id>`. */
const accountId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

/** `channels.<type>`: the accounts of one channel type. */
type ChannelSection<M extends ChannelModule> = z.ZodOptional<z.ZodObject<{ accounts: z.ZodRecord<typeof accountId, M['accountSchema']> }, z.core.$strict>>;

/** The shape of `channels`: one optional section per module, keyed by its type. */
export type ChannelsShape<Modules extends readonly ChannelModule[]> = { [M in Modules[number] as M['type']]: ChannelSection<M> };

/** The `channels` config schema composed from channel modules: `channels.<type>.accounts.<id>` is parsed by that type's account schema. */
export function channelsSchema<const Modules extends readonly ChannelModule[]>(modules: Modules) {
  const shape: Record<string, ChannelSection<ChannelModule>> = {};
  for (const m of modules) {
    if (Object.hasOwn(shape, m.type)) throw new Error(`two channel modules of type ${m.type}`);
    shape[m.type] = z.strictObject({ accounts: z.record(accountId, m.accountSchema) }).optional();
  }
  return z.strictObject(shape as ChannelsShape<Modules>);
}
