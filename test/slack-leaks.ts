import { ALL_CANARIES, type FakeSlack } from '@switchboard/testkit';

/**
 * Everything the bot ever put in front of people on the fake Slack: every version of every
 * message (deleted ones too), their blocks and attachments, and every ephemeral.
 */
export function postedContent(fake: FakeSlack): string {
  const messages = fake.messages(undefined, { includeDeleted: true }).map((m) => JSON.stringify([m.history, m.text, m.blocks ?? null, m.attachments ?? null]));
  const ephemerals = fake.ephemerals.map((e) => JSON.stringify([e.text, e.blocks ?? null]));
  // Every postMessage/update/postEphemeral request as sent, including failed and retried ones.
  const requests = fake.calls.filter((c) => c.method.startsWith('chat.')).map((c) => JSON.stringify(c.params));
  return [...messages, ...ephemerals, ...requests].join('\n');
}

/** The planted secrets found in what the bot posted (by count; never printed). */
export function postedCanaries(fake: FakeSlack): number {
  const all = postedContent(fake);
  return ALL_CANARIES.filter((c) => all.includes(c)).length;
}
