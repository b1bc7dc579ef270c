import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, startFakeTelegram, type FakeTelegram } from '@switchboard/testkit';
import { bearer, collectTurn, connectClient, connectPerson, toolsOfTurn, useGateway } from './helpers.js';
import { byTestId, expectSecretNotExposed, type GuardedContext, operator, shot, signIn, useBrowser, waitForPage } from './browser-helpers.js';
import { BOB, BOT_USERNAME, TOKEN, params, telegramAccount, waitForText } from './telegram-helpers.js';

// Issue 17, acceptance 1: the operators' console in a real Chromium against the real gateway and
// the testkit fakes (model, Telegram). Each flow starts in the browser and is checked where it
// lands: the fake Telegram chat, the waiting WebSocket client, the model's next request.

let tg: FakeTelegram;
beforeAll(async () => {
  tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
});
afterAll(async () => {
  await tg?.close();
});
const env = useGateway({
  config: () => ({ channels: { telegram: { accounts: { main: telegramAccount(tg, { dmPolicy: 'pairing', pairingRole: 'member' }) } } } }),
});
const b = useBrowser();

/** A signed-in operator console (the bootstrap operator token, `admin`). */
async function console_(): Promise<GuardedContext> {
  const g = await b.open();
  await signIn(g.page, env.gw, env.gw.credentials().operatorToken, 'overview');
  return g;
}

async function go(g: GuardedContext, nav: string, page: string): Promise<void> {
  await byTestId(g.page, `nav-${nav}`).click();
  await waitForPage(g.page, page);
}

describe('operator console (issue 17, acceptance 1)', () => {
  it('signs in with the operator token; a wrong token shows the error; the token is in no URL and no storage', async () => {
    const { gw } = env;
    const op = gw.credentials().operatorToken;
    const g = await b.open();
    const { page } = g;
    await page.goto(`${gw.url}/`);
    await waitForPage(page, 'signin');
    await shot(page, 'console-signin');
    await byTestId(page, 'signin-token').fill('swb_o_this-is-not-the-right-token-0000000000');
    await byTestId(page, 'signin-submit').click();
    await byTestId(page, 'signin-error').waitFor();
    expect(await byTestId(page, 'signin-error').textContent()).toMatch(/wrong|revoked|expired/i);
    await shot(page, 'console-signin-wrong');
    await byTestId(page, 'signin-token').fill(op);
    await byTestId(page, 'signin-submit').click();
    await waitForPage(page, 'overview');
    expect(await byTestId(page, 'signed-in-as').textContent()).toBeTruthy();
    // The request record the check below reads is complete: it has the sign-in post and the API calls.
    expect(g.urls).toContain(`${gw.url}/api/v1/auth/session`);
    expect(g.urls.some((u) => u.startsWith(`${gw.url}/api/v1/channels`))).toBe(true);
    await expectSecretNotExposed(g, op);
    // The form is gone and no input anywhere holds the token.
    const values = await page.locator('input, textarea').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    expect(values.some((v) => v.includes(op))).toBe(false);
    await shot(page, 'console-overview');
  });

  it('signs in with the keyboard alone, at 360 px in the dark scheme', async () => {
    const { gw } = env;
    const g = await b.open({ viewport: { width: 360, height: 740 }, colorScheme: 'dark' });
    const { page } = g;
    await page.goto(`${gw.url}/`);
    await waitForPage(page, 'signin');
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) !== 'signin-token'; i++) {
      await page.keyboard.press('Tab');
    }
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('signin-token');
    await page.keyboard.type(gw.credentials().operatorToken);
    await page.keyboard.press('Enter');
    await waitForPage(page, 'overview');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    // Dark: the page background is dark (each RGB channel below half).
    const rgb = (bg.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    expect(rgb.every((c) => c < 128)).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shot(page, 'console-overview-dark-360');
  });

  it('approves a pairing code; the held Telegram message is answered in the fake chat', async () => {
    const { gw } = env;
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'hi, may I talk to the assistant?' });
    const notice = await waitForText(tg, BOB.dm.id, 'pairing code');
    const code = /code is ([A-HJ-NP-Z2-9]{8})/.exec(String(params(notice).text))?.[1] ?? '';
    expect(code).toMatch(/^[A-Z2-9]{8}$/);
    const g = await console_();
    await go(g, 'pairing', 'pairing');
    await byTestId(g.page, `pairing-${code}`).waitFor();
    expect(await byTestId(g.page, `pairing-sender-${code}`).textContent()).toContain('Bob');
    await shot(g.page, 'console-pairing');
    await byTestId(g.page, `pairing-approve-${code}`).click();
    await waitForText(tg, BOB.dm.id, 'echo: hi, may I talk to the assistant?');
    await byTestId(g.page, `pairing-${code}`).waitFor({ state: 'detached' });
    const listed = await operator(gw, 'GET', '/pairing?status=approved');
    expect(listed.json.requests.some((r: { code: string }) => r.code === code)).toBe(true);
  });

  it('approves an approval while a WebSocket client waits; the client gets its answer; the transcript shows the tool call', async () => {
    const { gw, fake } = env;
    const ws = await connectClient(gw);
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'notes/console.md', content: 'approved in the console' }, id: 'toolu_console_1' }] },
      { text: 'Written, thanks.' },
    );
    ws.send({ type: 'message', clientId: 'console-approval-1', text: 'write the console note' });
    const req = await ws.next((f) => f.type === 'approval_request');
    const g = await console_();
    await go(g, 'approvals', 'approvals');
    await byTestId(g.page, `approval-${req.approvalId}`).waitFor();
    expect(await byTestId(g.page, `approval-summary-${req.approvalId}`).textContent()).toContain('notes/console.md');
    await shot(g.page, 'console-approvals');
    await byTestId(g.page, `approval-reason-${req.approvalId}`).fill('looks fine');
    await byTestId(g.page, `approval-approve-${req.approvalId}`).click();
    const turn = await collectTurn(ws, 'console-approval-1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Written, thanks.' });
    const decided = await operator(gw, 'GET', '/approvals?status=allowed');
    expect(decided.json.approvals.find((a: { id: string }) => a.id === req.approvalId)).toMatchObject({
      status: 'allowed',
      decidedBy: expect.stringMatching(/^operator:/),
    });
    await byTestId(g.page, `approval-decided-${req.approvalId}`).waitFor();
    ws.close();

    // The session's transcript, opened from the sessions page, shows the tool call.
    const session = (await operator(gw, 'GET', `/sessions?principalId=${gw.credentials().principalId}&channel=websocket`)).json.sessions[0].id as string;
    await go(g, 'sessions', 'sessions');
    await byTestId(g.page, `session-link-${session}`).waitFor();
    await shot(g.page, 'console-sessions');
    await byTestId(g.page, `session-link-${session}`).click();
    await waitForPage(g.page, 'session');
    await byTestId(g.page, 'transcript-tool-call').first().waitFor();
    expect(await byTestId(g.page, 'transcript-tool-call').first().textContent()).toContain('write_file');
    expect(await byTestId(g.page, 'transcript').textContent()).toContain('write the console note');
    await shot(g.page, 'console-transcript');

    // The decision is in the audit log, with the operator who made it.
    await go(g, 'audit', 'audit');
    await g.page.locator('[data-testid="audit-entry"]', { hasText: 'approval.decided' }).first().waitFor();
    expect(await g.page.locator('[data-testid="audit-entry"]', { hasText: 'approval.decided' }).first().textContent()).toContain('operator:');
    await shot(g.page, 'console-audit');
  });

  it('creates a principal and a client token for them; the secret is shown once and works', async () => {
    const { gw } = env;
    const g = await console_();
    await go(g, 'people', 'people');
    await byTestId(g.page, 'people-table').waitFor();
    await shot(g.page, 'console-people');
    await byTestId(g.page, 'principal-create-name').fill('carol');
    await byTestId(g.page, 'principal-create-role').selectOption('member');
    await byTestId(g.page, 'principal-create-submit').click();
    await waitForPage(g.page, 'person');
    const carol = (await operator(gw, 'GET', '/principals')).json.principals.find((p: { name: string }) => p.name === 'carol');
    expect(carol).toMatchObject({ role: 'member' });
    await byTestId(g.page, 'client-token-create').click();
    const secret = ((await byTestId(g.page, 'token-secret').textContent()) ?? '').trim();
    expect(secret).toMatch(/^swb_c_/);
    await shot(g.page, 'console-person-token');
    // The new token is carol's: a WebSocket client with it chats as her.
    const ws = await connectWs(gw.wsUrl, { headers: bearer(secret) });
    expect(await ws.next((f) => f.type === 'hello_ok')).toMatchObject({ principalId: carol.id });
    ws.close();
    // Shown once: gone after "I have copied it" and after a reload, and never kept by the page.
    await byTestId(g.page, 'token-secret-dismiss').click();
    await g.page.reload();
    await waitForPage(g.page, 'person');
    expect(await byTestId(g.page, 'token-secret').count()).toBe(0);
    expect(await g.page.content()).not.toContain(secret);
    await expectSecretNotExposed(g, secret);
  });

  it("switches a capability off for the member role; the member's next model request no longer offers it", async () => {
    const { gw, fake } = env;
    const { ws } = await connectPerson(gw, 'dave', 'member');
    expect((await toolsOfTurn(fake, ws, 'cap-before')).map((t) => t.name)).toContain('write_file');
    const g = await console_();
    await go(g, 'policies', 'policies');
    await byTestId(g.page, 'capability-scope-kind').selectOption('role');
    await byTestId(g.page, 'capability-scope-id').selectOption('member');
    const row = g.page.locator('[data-testid="capability-write_file"]');
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('on');
    await byTestId(g.page, 'capability-toggle-write_file').click();
    await g.page.locator('[data-testid="capability-write_file"][data-state="off"]').waitFor();
    await shot(g.page, 'console-policies-capability-off');
    expect((await toolsOfTurn(fake, ws, 'cap-off')).map((t) => t.name)).not.toContain('write_file');
    // The owner is not a member: still offered.
    const owner = await connectClient(gw);
    expect((await toolsOfTurn(fake, owner, 'cap-owner')).map((t) => t.name)).toContain('write_file');
    // And back on.
    await byTestId(g.page, 'capability-toggle-write_file').click();
    await g.page.locator('[data-testid="capability-write_file"][data-state="on"]').waitFor();
    expect((await toolsOfTurn(fake, ws, 'cap-on')).map((t) => t.name)).toContain('write_file');
    ws.close();
    owner.close();
  });

  it("the usage chart renders, and the totals are the fake model's numbers", async () => {
    const { fake } = env;
    // Every token the fake answered with so far (earlier tests made the calls).
    const fromFake = fake.requests
      .filter((r) => r.usage !== undefined)
      .reduce(
        (n, r) =>
          n +
          (r.usage?.input_tokens ?? 0) +
          (r.usage?.output_tokens ?? 0) +
          (r.usage?.cache_read_input_tokens ?? 0) +
          (r.usage?.cache_creation_input_tokens ?? 0),
        0,
      );
    expect(fromFake).toBeGreaterThan(0);
    const g = await console_();
    await go(g, 'usage', 'usage');
    const chart = byTestId(g.page, 'usage-chart');
    await chart.locator('canvas').first().waitFor();
    const box = await chart.locator('canvas').first().boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(100);
    await g.page.locator('[data-testid="usage-tokens-total"]', { hasText: fromFake.toLocaleString('en-US') }).waitFor();
    await shot(g.page, 'console-usage');
  });

  it("a Telegram account's health changes on the overview when the fake Telegram goes down", async () => {
    const g = await console_();
    const health = byTestId(g.page, 'channel-health-telegram-main');
    await g.page.locator('[data-testid="channel-health-telegram-main"][data-state="up"]').waitFor();
    await tg.close();
    await g.page.locator('[data-testid="channel-health-telegram-main"]:not([data-state="up"])').waitFor({ timeout: 30_000 });
    expect(['degraded', 'down']).toContain(await health.getAttribute('data-state'));
    expect(await byTestId(g.page, 'channel-detail-telegram-main').textContent()).toMatch(/poll|fail|connect/i);
    await shot(g.page, 'console-overview-telegram-down');
  });
});
