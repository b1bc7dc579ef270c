import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startFakeAnthropic,
  startFakeTelegram,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type FakeTelegram,
  type GatewayProcess,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BOT_USERNAME, params, storedOffset, telegramAccount, texts, TOKEN, waitForText } from './telegram-helpers.js';

// The getUpdates offset is the `telegram:main:offset` cursor row (DESIGN §5); the offset file of
// earlier releases is imported once on upgrade and never read again.
let model: FakeAnthropic;
let tg: FakeTelegram;

beforeAll(async () => {
  model = await startFakeAnthropic();
  tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
});
afterAll(async () => {
  await stopAllGateways();
  await tg?.close();
  await model?.close();
});

const account = () => telegramAccount(tg, { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] });

/** The `offset` the first getUpdates call after call `since` asked for (absent: none). */
async function firstPollOffset(since: number): Promise<unknown> {
  return params(await tg.waitFor('getUpdates', 15_000, since)).offset;
}

function dataDirWith(file: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-offset-'));
  if (file !== undefined) writeFileSync(join(dir, 'telegram-main.offset'), file, { mode: 0o600 });
  return dir;
}

describe('telegram: the update offset is a cursor row', () => {
  let gw: GatewayProcess;

  it('imports a legacy offset file once: updates it had confirmed are not answered again, the file is retired', async () => {
    const before = tg.calls.length;
    // Updates 1 and 2 were handled by the release that wrote the file ({"offset": 3}); 3 was not.
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'old one' });
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'old two' });
    const fresh = tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'after the upgrade' });
    expect(fresh.update_id).toBe(3);
    const dataDir = dataDirWith(`${JSON.stringify({ offset: 3 })}\n`);
    gw = await startGateway({ modelUrl: model.url, dataDir, config: { channels: { telegram: { accounts: { main: account() } } } } });
    expect(await firstPollOffset(before)).toBe(3);
    await waitForText(tg, ALICE.dm.id, 'echo: after the upgrade', 20_000);
    expect(texts(tg, ALICE.dm.id)).toEqual(['echo: after the upgrade']);
    await gw.waitForLog((l) => l.includes('"event":"telegram_offset_imported"') && l.includes('"offset":3'));
    expect(existsSync(join(dataDir, 'telegram-main.offset'))).toBe(false);
    expect(readFileSync(join(dataDir, 'telegram-main.offset.imported'), 'utf8')).toContain('"offset":3');
    await tg.waitFor((c) => c.method === 'getUpdates' && Number(params(c).offset) === 4, 15_000, before);
    expect(await storedOffset(gw)).toBe('4');
  });

  it('a restart resumes from the cursor row, even when an old offset file reappears; no file is written', async () => {
    expect((await gw.stop()).code).toBe(0);
    // A stale file (e.g. restored from a backup) must not move the offset back.
    writeFileSync(join(gw.dataDir, 'telegram-main.offset'), `${JSON.stringify({ offset: 1 })}\n`);
    const since = tg.calls.length;
    const answersBefore = texts(tg, ALICE.dm.id).length;
    gw = await gw.restart();
    expect(await firstPollOffset(since)).toBe(4);
    expect(existsSync(join(gw.dataDir, 'telegram-main.offset'))).toBe(false);
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'after the restart' });
    await waitForText(tg, ALICE.dm.id, 'echo: after the restart', 20_000, since);
    // Nothing before the stored offset was answered twice.
    expect(texts(tg, ALICE.dm.id).slice(answersBefore)).toEqual(['echo: after the restart']);
    expect(texts(tg, ALICE.dm.id).filter((t) => t === 'echo: after the upgrade')).toHaveLength(1);
    expect(existsSync(join(gw.dataDir, 'telegram-main.offset'))).toBe(false);
    await gw.stop();
  });

  it('a hostile legacy file is ignored with a warning: the gateway starts and polls without an offset', async () => {
    const dataDir = dataDirWith('{"__proto__":{"offset":999},"constructor":{"prototype":{"offset":999}}}');
    const since = tg.calls.length;
    const other = await startGateway({ modelUrl: model.url, dataDir, config: { channels: { telegram: { accounts: { main: account() } } } } });
    await other.waitForLog((l) => l.includes('"event":"telegram_offset_import_ignored"'));
    expect(await firstPollOffset(since)).toBeUndefined();
    expect(await storedOffset(other)).toBeNull();
    expect(existsSync(join(dataDir, 'telegram-main.offset'))).toBe(false);
    await other.stop();
  });
});
