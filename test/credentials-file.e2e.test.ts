import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectWs, startFakeAnthropic, startGateway, stopAllGateways, type FakeAnthropic } from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';

let fake: FakeAnthropic | undefined;
afterAll(async () => {
  await stopAllGateways();
  await fake?.close();
});

describe('the credentials file', () => {
  it('is <dataDir>/credentials.json; an old <dataDir>/credentials is renamed at start and still works', async () => {
    fake = await startFakeAnthropic();
    const gw = await startGateway({ modelUrl: fake.url });
    const file = join(gw.dataDir, 'credentials.json');
    const written = readFileSync(file, 'utf8');
    expect(Object.keys(JSON.parse(written) as object)).toEqual(['principal', 'principalId', 'clientToken', 'operatorToken']);
    expect(existsSync(join(gw.dataDir, 'credentials'))).toBe(false);
    await gw.stop();
    // What an older version left behind.
    renameSync(file, join(gw.dataDir, 'credentials'));
    const gw2 = await gw.restart();
    await gw2.waitForLog((l) => l.includes('"event":"credentials_renamed"'));
    expect(existsSync(join(gw.dataDir, 'credentials'))).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(written);
    const ws = await connectWs(gw2.wsUrl, { headers: bearer(gw2.credentials().clientToken) });
    expect((await chat(ws, 'c1', 'still me?')).end).toMatchObject({ type: 'final', text: 'echo: still me?' });
    ws.close();
    // Both present: nothing is overwritten, the old one is named in a warning.
    await gw2.stop();
    writeFileSync(join(gw.dataDir, 'credentials'), 'stale\n', { mode: 0o600 });
    const gw3 = await gw2.restart();
    const warn = JSON.parse(await gw3.waitForLog((l) => l.includes('"event":"credentials_renamed"'))) as { level: number; file: string };
    expect(warn).toMatchObject({ level: 40, file: join(gw.dataDir, 'credentials') });
    expect(readFileSync(file, 'utf8')).toBe(written);
    // Not a first start: no new credentials.
    expect(gw3.logs().some((l) => l.includes('"event":"credentials_created"'))).toBe(false);
  });
});
