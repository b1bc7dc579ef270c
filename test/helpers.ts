import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import {
  connectWs,
  runCli,
  startFakeAnthropic,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
  type WsClient,
  type WsFrame,
} from '@switchboard/testkit';

/** The frame that ends a turn: a `final`, or an `error` carrying a cursor. */
export const isEnd = (f: WsFrame) => f.type === 'final' || (f.type === 'error' && typeof f.cursor === 'number');

/** Sends one message and collects its frames until the turn ends. */
export async function chat(
  ws: WsClient,
  clientId: string,
  text: string,
  timeoutMs = 20_000,
): Promise<{ accepted: WsFrame; deltas: string[]; end: WsFrame; frames: WsFrame[] }> {
  ws.send({ type: 'message', clientId, text });
  return collectTurn(ws, clientId, timeoutMs);
}

/** Collects the frames of the turn for `clientId` until its final or error. */
export async function collectTurn(ws: WsClient, clientId: string, timeoutMs = 20_000) {
  const frames: WsFrame[] = [];
  let accepted: WsFrame | undefined;
  for (;;) {
    const f = await ws.next((x) => x.clientId === clientId, timeoutMs);
    frames.push(f);
    if (f.type === 'accepted') accepted = f;
    if (isEnd(f)) {
      return { accepted: accepted!, deltas: frames.filter((x) => x.type === 'delta').map((x) => x.text as string), end: f, frames };
    }
  }
}

/** Bearer header for a token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A WebSocket client of the gateway's default client token (the owner), once its `hello_ok` arrived. */
export async function connectClient(gw: GatewayProcess, token = gw.credentials().clientToken): Promise<WsClient> {
  const ws = await connectWs(gw.wsUrl, { headers: bearer(token) });
  await ws.next((f) => f.type === 'hello_ok');
  return ws;
}

/** A new principal with `role` and a client token (through the CLI), connected once its `hello_ok` arrived. */
export async function connectPerson(gw: GatewayProcess, name: string, role: string): Promise<{ ws: WsClient; principalId: string }> {
  const r = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', name, '--role', role], { gateway: gw })).stdout) as {
    secret: string;
    principalId: string;
  };
  return { ws: await connectClient(gw, r.secret), principalId: r.principalId };
}

/** A tool definition as the model request carries it. */
export type RequestTool = { name: string } & Record<string, unknown>;

/** Chats once on `ws` (a plain `hello`) and returns the `tools` of the one model request that turn made. */
export async function toolsOfTurn(fake: FakeAnthropic, ws: WsClient, clientId: string): Promise<RequestTool[]> {
  const before = fake.requests.length;
  const res = await chat(ws, clientId, 'hello');
  if (res.end.type !== 'final' || fake.requests.length !== before + 1) {
    throw new Error(`expected one model request and a final, got ${fake.requests.length - before} requests and ${JSON.stringify(res.end)}`);
  }
  return (fake.requests.at(-1)?.body.tools ?? []) as RequestTool[];
}

/** Sends one frame and takes the next frame of `type`. */
export async function askFrame(ws: WsClient, frame: unknown, type: string): Promise<WsFrame> {
  ws.send(frame);
  return ws.next((f) => f.type === type);
}

/** A gateway config fragment, deep-merged over the harness's base test config. */
export type ConfigFragment = Record<string, unknown>;

/** What `useFakeModel` gives a test file: the fake model API, started by `beforeAll`. */
export interface FakeModelEnv {
  readonly fake: FakeAnthropic;
}

/** What `useGateway` gives a test file: the fake model API and one gateway using it. */
export interface GatewayEnv extends FakeModelEnv {
  /** The gateway; assign the result of `env.gw.restart()` back to it after a restart. */
  gw: GatewayProcess;
  /** The WebSocket client connected at the start (only with the `client` option). */
  readonly ws: WsClient;
}

/** Throws a clear error when a test file reads the env outside a test or hook. */
function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not started yet: read it inside a test or a hook, not at collection time`);
  return value;
}

/**
 * Registers `beforeAll` (start a fake model API) and `afterAll` (stop every gateway the file
 * started, then close the fake) in the calling file or `describe`. For files that start their
 * own gateways with `startGateway({ modelUrl: env.fake.url, ... })`.
 */
export function useFakeModel(): FakeModelEnv {
  let fake: FakeAnthropic | undefined;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await stopAllGateways();
    await fake?.close();
  });
  return {
    get fake() {
      return started(fake, 'the fake model');
    },
  };
}

/**
 * Registers the hooks of `useFakeModel` plus a `beforeAll` that starts one gateway against the
 * fake, with `config` merged over the base test config (a function is called inside the hook, so
 * it may use values that earlier `beforeAll` hooks set). With `client: true` it then connects one
 * WebSocket client (header auth, the bootstrap client token) and closes it in `afterAll`. Hooks
 * the file registers afterwards run after all that, and their `afterAll` before the gateway stops
 * (vitest's default `sequence.hooks: 'stack'` runs `afterAll` hooks in reverse order).
 *
 *     const env = useGateway({ config: { limits: { modelMaxRetries: 0 } } });
 *     it('...', async () => { const { fake, gw } = env; ... });
 */
export function useGateway(opts: { config?: ConfigFragment | (() => ConfigFragment); client?: boolean } = {}): GatewayEnv {
  const model = useFakeModel();
  let gw: GatewayProcess | undefined;
  let ws: WsClient | undefined;
  beforeAll(async () => {
    const config = typeof opts.config === 'function' ? opts.config() : opts.config;
    gw = await startGateway({ modelUrl: model.fake.url, ...(config ? { config } : {}) });
    if (opts.client) ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  });
  afterAll(() => {
    ws?.close();
  });
  return {
    get fake() {
      return model.fake;
    },
    get gw() {
      return started(gw, 'the gateway');
    },
    set gw(next: GatewayProcess) {
      gw = next;
    },
    get ws() {
      if (!opts.client) throw new Error('useGateway: no WebSocket client was asked for (pass `client: true`)');
      return started(ws, 'the WebSocket client');
    },
  };
}

/** A person's workspace (`workspaces/<agent>/people/<principalId>/`), created if missing; default: the bootstrap owner's. */
export function personWorkspace(gw: GatewayProcess, principalId = gw.credentials().principalId, agent = 'default'): string {
  const dir = join(gw.dataDir, 'workspaces', agent, 'people', principalId);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The absolute path of `relPath` in whichever workspace holds it (a person's, a room's or the shared one), if any does. */
export function findInWorkspaces(gw: GatewayProcess, relPath: string): string | undefined {
  const root = join(gw.dataDir, 'workspaces');
  if (!existsSync(root)) return undefined;
  const want = relPath.split('/').join(sep);
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true })) {
    const full = join(e.parentPath, e.name);
    if (relative(root, full).endsWith(`${sep}${want}`)) return full;
  }
  return undefined;
}

/** A `tool_result` block as the model was sent it. */
export type ToolResultBlock = { type: string; tool_use_id?: string; content?: string; is_error?: boolean };

/** The tool_result the model was sent for tool_use `id` (the newest request that carries it). */
export function toolResultFor(fake: FakeAnthropic, id: string): ToolResultBlock {
  for (const r of [...fake.requests].reverse()) {
    for (const m of (r.body as { messages: Array<{ content: ToolResultBlock[] | string }> }).messages) {
      const hit = Array.isArray(m.content) ? m.content.find((b) => b.type === 'tool_result' && b.tool_use_id === id) : undefined;
      if (hit) return hit;
    }
  }
  throw new Error(`no tool_result for ${id}`);
}
