import { Bot, GrammyError } from 'grammy';
import { expect } from 'vitest';
import type { FakeTelegram, TgChat, TgUser } from '../../src/index.js';

/** Two bot tokens the suites register (not canaries). */
export const TOKEN_A = '7000001:TESTbotAlphaTokenNotASecret0000000001';
export const TOKEN_B = '7000002:TESTbotBravoTokenNotASecret0000000002';
export const BOTS = [
  { token: TOKEN_A, username: 'alpha_test_bot', first_name: 'Alpha' },
  { token: TOKEN_B, username: 'bravo_test_bot', first_name: 'Bravo' },
];

export const alice: TgUser = { id: 4201, is_bot: false, first_name: 'Alice', username: 'alice' };
export const bob: TgUser = { id: 4202, is_bot: false, first_name: 'Bob' };
export const aliceDm: TgChat = { id: 4201, type: 'private', first_name: 'Alice', username: 'alice' };
export const group: TgChat = { id: -100777, type: 'supergroup', title: 'Test group' };

/** A real grammY bot talking to the fake. */
export function makeBot(fake: FakeTelegram, token = TOKEN_A): Bot {
  return new Bot(token, { client: { apiRoot: fake.apiRoot }, botInfo: fake.botInfo(token) });
}

/** Awaits a rejection and asserts it is a GrammyError; returns it. */
export async function grammyError(p: Promise<unknown>): Promise<GrammyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GrammyError);
  return err as GrammyError;
}
