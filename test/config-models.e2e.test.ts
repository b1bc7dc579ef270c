import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, runCli, startGateway } from '@switchboard/testkit';
import { bearer, chat, useFakeModel } from './helpers.js';

// Issue 13 item 1: `models.<name>` entries. Bad keys exit 78 naming the key; a `model.maxTokens`
// above the model's `maxOutputTokens` is capped at start-up with a warning, and calls ask for the cap.

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-config-models-'));
  const file = join(dir, 'switchboard.json5');
  writeFileSync(file, text);
  return file;
}

async function start(text: string) {
  return runCli(['start'], { configPath: configFile(text), timeoutMs: 20_000 });
}

describe('invalid models config', () => {
  it('exits 78 naming an unknown key inside a models entry and inside its price', async () => {
    const r = await start(`{ gateway: { port: 0 }, models: { "claude-sonnet-4-5": { contextWindw: 100000, price: { inptu: 3 } } } }`);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('"models.claude-sonnet-4-5.contextWindw"');
    expect(r.stderr).toContain('"models.claude-sonnet-4-5.price.inptu"');
  });

  it('exits 78 naming a negative number, a negative price and a non-integer window', async () => {
    const r = await start(`{ gateway: { port: 0 }, models: { big: { outputReserve: -1, contextWindow: 1.5, price: { cacheRead: -0.3 } } } }`);
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/models\.big\.outputReserve: /);
    expect(r.stderr).toMatch(/models\.big\.contextWindow: /);
    expect(r.stderr).toMatch(/models\.big\.price\.cacheRead: /);
  });

  it('exits 78 naming models.<name>.outputReserve when it is not below the window, the default window included', async () => {
    const own = await start(`{ gateway: { port: 0 }, models: { small: { contextWindow: 20000, outputReserve: 20000 } } }`);
    expect(own.code).toBe(78);
    expect(own.stderr).toMatch(/models\.small\.outputReserve: must be less than contextWindow \(20000 ≥ 20000\)/);
    const dflt = await start(`{ gateway: { port: 0 }, models: { "claude-haiku-4-5": { outputReserve: 250000 } } }`);
    expect(dflt.code).toBe(78);
    expect(dflt.stderr).toMatch(/models\.claude-haiku-4-5\.outputReserve: must be less than contextWindow \(250000 ≥ 200000, the default\)/);
  });
});

describe('maxOutputTokens caps model.maxTokens', () => {
  const env = useFakeModel();

  it('warns once at start-up and every call asks for the cap', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { model: { maxTokens: 1024 }, models: { 'claude-test': { maxOutputTokens: 300 } } } });
    const line = gw.logs().find((l) => l.includes('"model_max_tokens_capped"'));
    expect(line).toBeDefined();
    const record = JSON.parse(line!) as { level: number; model: string; configured: number; maxOutputTokens: number; msg: string };
    expect(record).toMatchObject({ level: 40, model: 'claude-test', configured: 1024, maxOutputTokens: 300 });
    expect(record.msg).toContain('models.claude-test.maxOutputTokens');
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const before = env.fake.requests.length;
    const res = await chat(ws, 'cap-1', 'hello');
    expect(res.end.type).toBe('final');
    expect(env.fake.requests.length).toBe(before + 1);
    expect(env.fake.requests.at(-1)!.body.max_tokens).toBe(300);
    ws.close();
  });

  it('leaves model.maxTokens alone (no warning) when it is within the cap', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { model: { maxTokens: 1024 } } });
    expect(gw.logs().some((l) => l.includes('"model_max_tokens_capped"'))).toBe(false);
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const res = await chat(ws, 'cap-2', 'hello');
    expect(res.end.type).toBe('final');
    expect(env.fake.requests.at(-1)!.body.max_tokens).toBe(1024);
    ws.close();
  });
});
