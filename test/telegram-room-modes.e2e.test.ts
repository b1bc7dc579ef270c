import { beforeAll, describe, it } from 'vitest';
import { ALICE, GROUP, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';
import { linkedPrincipal } from './principal-helpers.js';

// The agent allows acceptEdits (a member's ceiling); the team room is set to plan.
const env = useTelegramEnv(
  { dmPolicy: 'allowlist', groups: { [String(GROUP.id)]: { requireMention: false, mode: 'plan' } } },
  { agents: { default: { mode: 'acceptEdits' } } },
);

const say = (chat: { id: number; type: string }, text: string) => env.tg.sendUserMessage(TOKEN, { chat: chat as typeof GROUP, from: ALICE.user, text });

beforeAll(async () => {
  await linkedPrincipal(env.gw, 'alice', 'member', 'telegram', String(ALICE.user.id));
});

describe('telegram: a room mode in chat', () => {
  it("/status in the room shows the room's mode; /mode cannot raise it and names the limit; the DM keeps the broader mode", async () => {
    const { tg } = env;
    say(GROUP, '/status');
    await waitForText(tg, GROUP.id, 'Mode: plan');
    say(GROUP, '/mode acceptEdits');
    await waitForText(tg, GROUP.id, "Mode not changed: this room's mode allows at most plan mode");
    say(ALICE.dm, '/status');
    await waitForText(tg, ALICE.dm.id, 'Mode: acceptEdits');
    say(ALICE.dm, '/mode bypassPermissions');
    await waitForText(tg, ALICE.dm.id, 'Mode not changed: the member role may use at most acceptEdits mode');
  });
});
