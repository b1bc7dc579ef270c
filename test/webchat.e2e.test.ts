import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page, WebSocketRoute } from 'playwright-core';
import { connectWs, WsHandshakeError } from '@switchboard/testkit';
import { bearer, chat, personWorkspace, useGateway } from './helpers.js';
import { byTestId, expectSecretNotExposed, memberWithToken, operator, shot, signIn, useBrowser, waitForPage } from './browser-helpers.js';

// Issue 17, acceptance 2: the members' web chat in a real Chromium against the real gateway. The
// member signs in with a client token (posted once; the socket then authenticates at the upgrade
// with the session cookie), chats with a streamed answer, approves their own approval, reloads
// and sees the conversation again, gets what they missed through the cursor after a reconnect, and
// cannot open another member's session — neither in the UI nor through the API.

const env = useGateway();
const b = useBrowser();

const line = (page: Page, role: string, text?: string | RegExp) =>
  page.locator(`[data-testid="chat-message"][data-role="${role}"]`, text === undefined ? {} : { hasText: text });

/** An answer once its final arrived (while it streams, the same line has `data-streaming="true"`). */
const answer = (page: Page, text: string) => page.locator('[data-testid="chat-message"][data-role="assistant"][data-streaming="false"]', { hasText: text });

async function send(page: Page, text: string): Promise<void> {
  await byTestId(page, 'chat-input').fill(text);
  await byTestId(page, 'chat-send').click();
}

async function openChat(token: string, opts: Parameters<typeof b.open>[0] = {}) {
  const g = await b.open(opts);
  await signIn(g.page, env.gw, token, 'chat');
  await g.page.locator('[data-testid="chat-status"][data-state="open"]').waitFor();
  return g;
}

describe('web chat (issue 17, acceptance 2)', () => {
  it('a member signs in with a client token, gets a streamed answer, approves their own approval, and a reload shows the conversation', async () => {
    const { gw, fake } = env;
    const mia = await memberWithToken(gw, 'mia');
    const g = await openChat(mia.secret);
    const { page } = g;
    expect(await page.locator('[data-testid="signin-token"]').count()).toBe(0);

    // Streamed: the fake holds the answer after its first text chunk; the page shows that part live.
    fake.enqueue({ text: 'The first part of a streamed answer, and then all the rest of it arrives at once.', holdAfterEvents: 4 });
    await send(page, 'hello from the browser');
    await line(page, 'user', 'hello from the browser').waitFor();
    const streaming = page.locator('[data-testid="chat-message"][data-role="assistant"][data-streaming="true"]');
    await streaming.waitFor();
    const partial = (await streaming.locator('.chat-text').textContent()) ?? '';
    expect(partial.length).toBeGreaterThan(0);
    expect(partial).not.toContain('arrives at once.');
    await shot(page, 'webchat-streaming');
    fake.release();
    await page.locator('[data-testid="chat-message"][data-role="assistant"][data-streaming="false"]', { hasText: 'arrives at once.' }).waitFor();

    // The member's own approval: buttons in the chat; the tool runs once allowed.
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'notes/web.md', content: 'from the web chat' }, id: 'toolu_web_1' }] },
      { text: 'Saved your note.' },
    );
    await send(page, 'please save a note');
    const approval = page.locator('[data-testid="chat-approval"][data-state="pending"]');
    await approval.waitFor();
    expect(await approval.textContent()).toContain('write_file');
    await shot(page, 'webchat-approval');
    const approvalId = (await approval.getAttribute('data-approval')) ?? '';
    await byTestId(page, `chat-approve-${approvalId}`).click();
    await answer(page, 'Saved your note.').waitFor();
    await page.locator(`[data-testid="chat-approval"][data-approval="${approvalId}"][data-state="allowed"]`).waitFor();
    await line(page, 'tool', 'write_file').first().waitFor();
    expect(readFileSync(join(personWorkspace(gw, mia.principalId), 'notes/web.md'), 'utf8')).toBe('from the web chat');
    const decided = await operator(gw, 'GET', '/approvals?status=allowed');
    expect(decided.json.approvals.find((a: { id: string }) => a.id === approvalId)).toMatchObject({
      status: 'allowed',
      decidedBy: `principal:${mia.principalId}`,
    });
    await shot(page, 'webchat-answered');

    // A reload: the conversation is there again, in order, from the member's own transcript.
    await page.reload();
    await waitForPage(page, 'chat');
    await answer(page, 'Saved your note.').waitFor();
    const texts = await page.locator('[data-testid="chat-message"][data-role="user"], [data-testid="chat-message"][data-role="assistant"]').allTextContents();
    const order = ['hello from the browser', 'arrives at once.', 'please save a note', 'Saved your note.'].map((t) => texts.findIndex((x) => x.includes(t)));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    await line(page, 'tool', 'write_file').first().waitFor();
    await shot(page, 'webchat-reloaded');

    // No token anywhere the page can reach: not in a URL, web storage or a readable cookie.
    await expectSecretNotExposed(g, mia.secret);
    expect(await page.evaluate(() => document.cookie)).not.toContain('swb_session');
    expect(g.urls.filter((u) => u.startsWith('ws')).every((u) => !u.includes('?'))).toBe(true);
  });

  it('/new, /usage and /compact from the input box', async () => {
    const { gw } = env;
    const nia = await memberWithToken(gw, 'nia');
    const { page } = await openChat(nia.secret, { viewport: { width: 360, height: 740 }, colorScheme: 'dark' });
    await send(page, 'remember the word teapot');
    await answer(page, 'teapot').waitFor();
    await send(page, '/usage');
    await line(page, 'system', 'Usage').waitFor();
    expect(await line(page, 'system', 'Usage').textContent()).toMatch(/Today: [\d,]+ tokens/);
    await send(page, '/compact');
    await line(page, 'system', /compact/i)
      .first()
      .waitFor();
    await shot(page, 'webchat-commands-360-dark');
    await send(page, '/new');
    await line(page, 'system', 'New conversation started.').waitFor();
    expect(await line(page, 'user', 'teapot').count()).toBe(0);
    const sessions = await operator(gw, 'GET', `/sessions?principalId=${nia.principalId}`);
    expect(sessions.json.sessions.filter((s: { endedAt: string | null }) => s.endedAt !== null).length).toBe(1);
  });

  it('after a reconnect the page asks for the finals after its cursor and shows what it missed', async () => {
    const { gw } = env;
    const ria = await memberWithToken(gw, 'ria');
    const g = await b.open();
    const { page, context } = g;
    // The page's socket goes through this route, so the test can cut it and keep it down.
    let down = false;
    let current: WebSocketRoute | undefined;
    const fromPage: string[] = [];
    const toPage: string[] = [];
    await context.routeWebSocket(/\/ws$/, (route) => {
      if (down) {
        void route.close({ code: 4000, reason: 'test: offline' });
        return;
      }
      current = route;
      const server = route.connectToServer();
      route.onMessage((m) => {
        fromPage.push(String(m));
        server.send(m);
      });
      server.onMessage((m) => {
        toPage.push(String(m));
        route.send(m);
      });
    });
    await signIn(page, gw, ria.secret, 'chat');
    await page.locator('[data-testid="chat-status"][data-state="open"]').waitFor();
    await send(page, 'first message');
    await answer(page, 'first message').waitFor();
    const firstCursor = Math.max(
      ...toPage
        .map((t) => JSON.parse(t))
        .filter((f) => f.type === 'final')
        .map((f) => f.cursor as number),
    );

    down = true;
    await current?.close({ code: 4001, reason: 'test: cut' });
    await page.locator('[data-testid="chat-status"][data-state="connecting"]').waitFor();
    // While the page is away, the same member chats from another client.
    const ws = await connectWs(gw.wsUrl, { headers: bearer(ria.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    const away = await chat(ws, 'away-1', 'sent while the page was away');
    expect(away.end.type).toBe('final');
    ws.close();

    down = false;
    await page.locator('[data-testid="chat-status"][data-state="open"]').waitFor();
    await answer(page, 'sent while the page was away').waitFor();
    await line(page, 'user', 'sent while the page was away').waitFor();
    const hellos = fromPage.map((t) => JSON.parse(t)).filter((f) => f.type === 'hello');
    expect(hellos.at(-1)).toEqual({ type: 'hello', cursor: firstCursor });
    expect(toPage.map((t) => JSON.parse(t)).some((f) => f.type === 'final' && f.clientId === 'away-1' && f.cursor > firstCursor)).toBe(true);
    await shot(page, 'webchat-reconnected');
  });

  it('a plan approval offers one button per mode; the member picks one and the turn goes on', async () => {
    const { gw, fake } = env;
    const pia = await memberWithToken(gw, 'pia');
    const { page } = await openChat(pia.secret);
    await send(page, '/mode plan');
    await line(page, 'system', 'Permission mode: plan.').waitFor();
    fake.enqueue(
      { toolUses: [{ name: 'exit_plan_mode', input: { plan: '1. read\n2. write' }, id: 'toolu_web_plan' }] },
      { text: 'Plan approved, going ahead.' },
    );
    await send(page, 'make a plan');
    const approval = page.locator('[data-testid="chat-approval"][data-state="pending"]');
    await approval.waitFor();
    const id = (await approval.getAttribute('data-approval')) ?? '';
    // A plan approval offers no "always allow".
    expect(await byTestId(page, `chat-always-${id}`).count()).toBe(0);
    const choices = await approval.locator(`[data-testid^="chat-approve-${id}-"]`).evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
    expect(choices).toContain(`chat-approve-${id}-default`);
    await shot(page, 'webchat-plan-approval');
    await byTestId(page, `chat-approve-${id}-default`).click();
    await answer(page, 'Plan approved, going ahead.').waitFor();
    await page.locator(`[data-testid="chat-approval"][data-approval="${id}"][data-state="allowed"]`).waitFor();
    await send(page, '/mode');
    await line(page, 'system', 'Permission mode: default').waitFor();
  });

  it('"Always allow" saves a rule for this member only: the same call is not asked again', async () => {
    const { gw, fake } = env;
    const ada = await memberWithToken(gw, 'ada');
    const { page } = await openChat(ada.secret);
    const write = (id: string) => ({ toolUses: [{ name: 'write_file', input: { path: 'notes/always.md', content: id }, id }] });
    fake.enqueue(write('toolu_always_a'), { text: 'First write done.' });
    await send(page, 'write it once');
    const approval = page.locator('[data-testid="chat-approval"][data-state="pending"]');
    await approval.waitFor();
    const id = (await approval.getAttribute('data-approval')) ?? '';
    await byTestId(page, `chat-always-${id}`).click();
    await answer(page, 'First write done.').waitFor();
    fake.enqueue(write('toolu_always_b'), { text: 'Second write done.' });
    await send(page, 'write it again');
    await answer(page, 'Second write done.').waitFor();
    expect(await page.locator('[data-testid="chat-approval"]').count()).toBe(1);
    const rules = await operator(gw, 'GET', '/rules');
    expect(rules.json.rules.find((r: { rule: string }) => r.rule === 'write_file(notes/always.md)')).toMatchObject({
      behavior: 'allow',
      scope: { kind: 'principal', id: ada.principalId },
    });
  });

  it('a failed model call shows as an error line, and the next message is answered', async () => {
    const { gw, fake } = env;
    const kai = await memberWithToken(gw, 'kai');
    const { page } = await openChat(kai.secret);
    const fail = { error: { status: 400, type: 'invalid_request_error', message: 'the fake refuses this one' } };
    fake.enqueue(fail);
    await send(page, 'this one fails');
    await line(page, 'error', 'model_error').waitFor();
    await send(page, 'and this one works');
    await answer(page, 'echo: and this one works').waitFor();
    await shot(page, 'webchat-model-error');
  });

  it("revoking the member's token ends the chat and brings back the sign-in form", async () => {
    const { gw } = env;
    const lea = await memberWithToken(gw, 'lea');
    const { page } = await openChat(lea.secret);
    const tokens = await operator(gw, 'GET', `/tokens?principalId=${lea.principalId}&active=true`);
    const id = tokens.json.tokens[0].id as string;
    expect((await operator(gw, 'DELETE', `/tokens/${id}`)).status).toBe(200);
    await waitForPage(page, 'signin');
    expect(await page.locator('[data-testid="chat-input"]').count()).toBe(0);
  });

  it("a member cannot open another member's session: not in the UI, not through the API", async () => {
    const { gw } = env;
    const otto = await memberWithToken(gw, 'otto');
    const uma = await memberWithToken(gw, 'uma');
    const ows = await connectWs(gw.wsUrl, { headers: bearer(otto.secret) });
    await ows.next((f) => f.type === 'hello_ok');
    await chat(ows, 'otto-1', 'otto secret plans');
    ows.close();
    const ottoSessions = await operator(gw, 'GET', `/sessions?principalId=${otto.principalId}`);
    const ottoSession = ottoSessions.json.sessions[0].id as string;

    const { page } = await openChat(uma.secret);
    // The operators' transcript route is not a member's: the app sends them back to their chat.
    await page.goto(`${gw.url}/sessions/${ottoSession}`);
    await waitForPage(page, 'chat');
    expect(await page.content()).not.toContain('otto secret plans');
    // The API behind the page, with the member's cookie.
    const answers = await page.evaluate(async (id) => {
      const get = async (path: string) => {
        const r = await fetch(path, { credentials: 'same-origin' });
        return { status: r.status, body: await r.text() };
      };
      return {
        mine: await get(`/api/v1/me/sessions/${encodeURIComponent(id)}/transcript`),
        operatorRoute: await get(`/api/v1/sessions/${encodeURIComponent(id)}/transcript`),
        list: await get('/api/v1/me/sessions'),
      };
    }, ottoSession);
    expect(answers.mine.status).toBe(404);
    expect(answers.operatorRoute.status).toBe(403);
    expect(answers.list.status).toBe(200);
    expect(answers.list.body).not.toContain(ottoSession);
    for (const a of Object.values(answers)) expect(a.body).not.toContain('otto secret plans');
    await shot(page, 'webchat-other-session-refused');
  });

  it('the socket is refused from another origin, even with a valid console cookie', async () => {
    const { gw } = env;
    const { page, context } = await openChat((await memberWithToken(gw, 'vic')).secret);
    const cookie = (await context.cookies()).find((c) => c.name === 'swb_session');
    expect(cookie).toBeDefined();
    const cookieHeader = { cookie: `swb_session=${cookie?.value}` };
    // From the console's own origin the cookie opens the socket …
    const ok = await connectWs(gw.wsUrl, { headers: { ...cookieHeader, origin: gw.url } });
    expect((await ok.next((f) => f.type === 'hello_ok')).principalId).toBeTruthy();
    ok.close();
    // … from any other origin it is refused before the handshake.
    const refused = await connectWs(gw.wsUrl, { headers: { ...cookieHeader, origin: 'http://127.0.0.1:1' } }).then(
      (c) => {
        c.close();
        return 101;
      },
      (err: unknown) => (err instanceof WsHandshakeError ? err.status : -1),
    );
    expect(refused).toBe(403);
    await page.close();
  });
});

describe('web chat without a WebSocket account', () => {
  const off = useGateway({ config: { channels: { websocket: undefined } } });

  it('a member still signs in, and the page says web chat is off', async () => {
    const { gw } = off;
    const m = await memberWithToken(gw, 'wes');
    const { page } = await b.open();
    await signIn(page, gw, m.secret, 'chat');
    await byTestId(page, 'webchat-off').waitFor();
    expect(await byTestId(page, 'webchat-off').textContent()).toMatch(/off/i);
    expect(await page.locator('[data-testid="chat-input"]').count()).toBe(0);
    await shot(page, 'webchat-off');
  });
});
